package volume

import "testing"

func TestPickMountTarget(t *testing.T) {
	cands := []MountTargetChoice{{Zones: []string{"use1-az1", "us-east-1a"}, IP: "10.0.1.1"}, {Zones: []string{"use1-az2"}, IP: "10.0.2.1"}}
	tests := []struct {
		name      string
		cands     []MountTargetChoice
		preferred []string
		ip        string
		in, ok    bool
	}{
		{"by zone ID", cands, []string{"use1-az2"}, "10.0.2.1", true, true},
		{"first preference wins", cands, []string{"use1-az2", "us-east-1a"}, "10.0.2.1", true, true},
		{"by zone name", cands, []string{"", "us-east-1a"}, "10.0.1.1", true, true},
		{"none in the zone: the first", cands, []string{"use1-az9"}, "10.0.1.1", false, true},
		{"no candidates", nil, []string{"use1-az1"}, "", false, false},
	}
	for _, tt := range tests {
		ip, in, ok := PickMountTarget(tt.cands, tt.preferred...)
		if ip != tt.ip || in != tt.in || ok != tt.ok {
			t.Errorf("%s: %q, %v, %v; want %q, %v, %v", tt.name, ip, in, ok, tt.ip, tt.in, tt.ok)
		}
	}
}
