// Package volstats measures how much of an EFS volume is used, for NodeGetVolumeStats: a walk of the volume
// (bytes and inodes) runs in the background, at most a few at a time per file system, and its result is cached
// for a refresh period, because walking a network file system is expensive.
package volstats
