package fakeaws

import (
	"strings"
	"testing"
	"time"
)

func TestParseFaultSpec(t *testing.T) {
	rows := []struct {
		spec    string
		wantAPI string
		want    Fault
		wantErr string
	}{
		{"CreateAccessPoint:latency=20ms", "CreateAccessPoint", Fault{Latency: 20 * time.Millisecond}, ""},
		{"*:throttle-rate=5,throttle-probability=0.25", "*", Fault{ThrottleRate: 5, ThrottleProbability: 0.25}, ""},
		{"AssumeRole:error-probability=1,error-status=503", "AssumeRole", Fault{ErrorProbability: 1, ErrorStatus: 503}, ""},
		{"CreateAccessPoint", "", Fault{}, "want API:key=value"},
		{"lower:latency=1s", "", Fault{}, "want API:key=value"},
		{"X1:", "", Fault{}, "no settings"},
		{"X1:latency", "", Fault{}, "want key=value"},
		{"X1:latency=-1s", "", Fault{}, "non-negative duration"},
		{"X1:throttle-probability=1.5", "", Fault{}, "from 0 to 1"},
		{"X1:error-status=404", "", Fault{}, "500 to 599"},
		{"X1:colour=red", "", Fault{}, "unknown setting"},
	}
	for _, row := range rows {
		api, f, err := ParseFaultSpec(row.spec)
		if row.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), row.wantErr) || !strings.Contains(err.Error(), row.spec) {
				t.Errorf("ParseFaultSpec(%q) err = %v, want one naming the spec and %q", row.spec, err, row.wantErr)
			}
			continue
		}
		if err != nil || api != row.wantAPI || f != row.want {
			t.Errorf("ParseFaultSpec(%q) = %q, %+v, %v; want %q, %+v", row.spec, api, f, err, row.wantAPI, row.want)
		}
	}
}

// FuzzParseFaultSpec checks that parsing never panics and that parse → format → parse is stable.
func FuzzParseFaultSpec(f *testing.F) {
	for _, s := range []string{"CreateAccessPoint:latency=20ms", "*:throttle-rate=0.5,error-probability=0.1,error-status=502", "X:", ":"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		api, fault, err := ParseFaultSpec(spec)
		if err != nil {
			return
		}
		again, fault2, err := ParseFaultSpec(FormatFaultSpec(api, fault))
		if fault == (Fault{}) {
			return // "X:latency=0" formats to "X:", which has no settings
		}
		if err != nil || again != api || fault2 != fault {
			t.Fatalf("%q → %q → %q %+v %v", spec, FormatFaultSpec(api, fault), again, fault2, err)
		}
	})
}
