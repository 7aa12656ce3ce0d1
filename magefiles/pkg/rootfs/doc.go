// Package rootfs reads the file system an image's layers add up to (whiteouts applied) into an index of paths, and
// answers what an assembly needs to know about a base: where symlinks lead, which Python it runs, and whether the
// programs efs-utils needs are there.
package rootfs
