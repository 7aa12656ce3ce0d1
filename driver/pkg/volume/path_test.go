package volume

import "testing"

func TestDotElements(t *testing.T) {
	for _, tt := range []struct {
		p           string
		dotDot, dot bool
	}{
		{"/a/b", false, false}, {"../a", true, false}, {"/a/./b", false, true}, {"./..", true, true}, {"a..b/.c", false, false}, {"", false, false},
	} {
		if dd, d := DotElements(tt.p); dd != tt.dotDot || d != tt.dot {
			t.Errorf("DotElements(%q) = %v, %v; want %v, %v", tt.p, dd, d, tt.dotDot, tt.dot)
		}
	}
}
