package fakeaws

import (
	"fmt"
	"sort"
	"sync"
	"time"
)

// state is the EFS data of a Server, guarded by one RWMutex. Access points are indexed by ID, by client token
// and per file system in creation order, so that a page of DescribeAccessPoints costs a binary search and a copy
// of the page only.
type state struct {
	srv *Server

	mu        sync.RWMutex
	seq       uint64
	fs        map[string]*fsRecord
	fsOrder   []*fsRecord // by seq
	fsByToken map[string]*fsRecord
	mts       map[string]*mtRecord
	aps       map[string]*apRecord
	apByToken map[string]*apRecord
	usedIPs   map[string]bool
	nextHost  []int // per zone: next host number to try in its subnet
}

type fsRecord struct {
	seq     uint64
	fs      FileSystem
	readyAt time.Time
	aps     []*apRecord // by seq
	mts     []*mtRecord // by seq
}

type mtRecord struct {
	seq     uint64
	mt      MountTarget
	readyAt time.Time
}

type apRecord struct {
	seq     uint64
	ap      AccessPoint
	readyAt time.Time
}

func newState(s *Server) *state {
	return &state{
		srv: s, fs: map[string]*fsRecord{}, fsByToken: map[string]*fsRecord{}, mts: map[string]*mtRecord{},
		aps: map[string]*apRecord{}, apByToken: map[string]*apRecord{}, usedIPs: map[string]bool{},
		nextHost: make([]int, len(s.opts.Zones)),
	}
}

// lifeCycle returns the state a resource is in now: "creating" turns "available" once readyAt has passed.
func lifeCycle(stored string, readyAt, now time.Time) string {
	if stored == "creating" && !now.Before(readyAt) {
		return "available"
	}
	return stored
}

func (r *fsRecord) view(now time.Time) FileSystem {
	f := r.fs
	f.LifeCycleState = lifeCycle(f.LifeCycleState, r.readyAt, now)
	f.NumberOfMountTargets = len(r.mts)
	f.Tags = append([]Tag(nil), f.Tags...)
	return f
}

func (r *mtRecord) view(now time.Time) MountTarget {
	m := r.mt
	m.LifeCycleState = lifeCycle(m.LifeCycleState, r.readyAt, now)
	return m
}

func (r *apRecord) view(now time.Time) AccessPoint {
	a := r.ap.clone()
	a.LifeCycleState = lifeCycle(a.LifeCycleState, r.readyAt, now)
	return a
}

// newID returns prefix + 17 random hex digits, unused in taken.
func newID[T any](s *Server, prefix string, taken map[string]T) string {
	for {
		id := prefix + s.randHex(17)
		if _, dup := taken[id]; !dup {
			return id
		}
	}
}

// arn returns the ARN of an EFS resource ("file-system/fs-…" or "access-point/fsap-…").
func (s *Server) arn(resource string) string {
	return fmt.Sprintf("arn:aws:elasticfilesystem:%s:%s:%s", s.opts.Region, s.opts.AccountID, resource)
}

// Subnets returns the subnet of each zone, in zone order.
func (s *Server) Subnets() []Subnet {
	out := make([]Subnet, len(s.opts.Zones))
	for i := range s.opts.Zones {
		out[i] = s.subnet(i)
	}
	return out
}

// subnet returns the subnet of zone i: 172.31.16*i.0/20 in vpc-0fa4e0c1d2b3a4958.
func (s *Server) subnet(i int) Subnet {
	z := s.opts.Zones[i]
	return Subnet{
		SubnetId: fmt.Sprintf("subnet-0a%015x", 0x5ab0e7+i), VpcId: "vpc-0fa4e0c1d2b3a4958",
		AvailabilityZoneName: z.Name, AvailabilityZoneId: z.ID,
		CidrBlock: fmt.Sprintf("172.31.%d.0/20", (16*i)%256),
	}
}

// subnetIP returns host number h of zone i's subnet.
func subnetIP(i, h int) string {
	base := (16 * i) % 256
	return fmt.Sprintf("172.31.%d.%d", base+h/256, h%256)
}

// allocIP returns a free address in zone i's subnet (hosts 4 … 4090; AWS reserves the first four and the last).
// Callers hold st.mu.
func (st *state) allocIP(i int) (string, bool) {
	for tries := 0; tries < 4087; tries++ {
		h := 4 + (st.nextHost[i]+tries)%4087
		ip := subnetIP(i, h)
		if !st.usedIPs[ip] {
			st.nextHost[i] = h - 4 + 1
			return ip, true
		}
	}
	return "", false
}

// removeBySeq removes the record with that seq from a slice ordered by seq.
func removeBySeq[T any](list []T, seq uint64, seqOf func(T) uint64) []T {
	i := sort.Search(len(list), func(i int) bool { return seqOf(list[i]) >= seq })
	if i < len(list) && seqOf(list[i]) == seq {
		return append(list[:i], list[i+1:]...)
	}
	return list
}
