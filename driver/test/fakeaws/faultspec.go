package fakeaws

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

var apiNamePattern = regexp.MustCompile(`^(\*|[A-Z][A-Za-z0-9]{1,63})$`)

// ParseFaultSpec parses a fault given on the command line:
//
//	API:key=value[,key=value...]
//
// where API is an operation name (CreateAccessPoint) or "*", and the keys are latency (a Go duration),
// throttle-rate (calls per second), throttle-probability and error-probability (0 to 1) and error-status
// (500 to 599). Example: "CreateAccessPoint:latency=20ms,throttle-probability=0.1".
func ParseFaultSpec(spec string) (string, Fault, error) {
	var f Fault
	api, rest, ok := strings.Cut(spec, ":")
	if !ok || !apiNamePattern.MatchString(api) {
		return "", f, fmt.Errorf("fault %q: want API:key=value[,key=value...] with API an operation name "+
			"like CreateAccessPoint or *", spec)
	}
	if rest == "" {
		return "", f, fmt.Errorf("fault %q: no settings; want latency, throttle-rate, throttle-probability, "+
			"error-probability or error-status", spec)
	}
	for _, kv := range strings.Split(rest, ",") {
		key, val, ok := strings.Cut(kv, "=")
		if !ok {
			return "", f, fmt.Errorf("fault %q: setting %q: want key=value", spec, kv)
		}
		if err := setFaultField(&f, key, val); err != nil {
			return "", f, fmt.Errorf("fault %q: %w", spec, err)
		}
	}
	return api, f, nil
}

func setFaultField(f *Fault, key, val string) error {
	prob := func(dst *float64) error {
		p, err := strconv.ParseFloat(val, 64)
		if err != nil || p < 0 || p > 1 {
			return fmt.Errorf("%s %q: want a number from 0 to 1", key, val)
		}
		*dst = p
		return nil
	}
	switch key {
	case "latency":
		d, err := time.ParseDuration(val)
		if err != nil || d < 0 {
			return fmt.Errorf("latency %q: want a non-negative duration like 20ms", val)
		}
		f.Latency = d
	case "throttle-rate":
		r, err := strconv.ParseFloat(val, 64)
		if err != nil || r < 0 || r > 1e9 {
			return fmt.Errorf("throttle-rate %q: want calls per second, a number >= 0 (0 = unlimited)", val)
		}
		f.ThrottleRate = r
	case "throttle-probability":
		return prob(&f.ThrottleProbability)
	case "error-probability":
		return prob(&f.ErrorProbability)
	case "error-status":
		n, err := strconv.Atoi(val)
		if err != nil || n < 500 || n > 599 {
			return fmt.Errorf("error-status %q: want an HTTP status from 500 to 599", val)
		}
		f.ErrorStatus = n
	default:
		return fmt.Errorf("unknown setting %q: want latency, throttle-rate, throttle-probability, "+
			"error-probability or error-status", key)
	}
	return nil
}

// FormatFaultSpec formats a fault the way ParseFaultSpec reads it.
func FormatFaultSpec(api string, f Fault) string {
	var parts []string
	if f.Latency != 0 {
		parts = append(parts, "latency="+f.Latency.String())
	}
	if f.ThrottleRate != 0 {
		parts = append(parts, "throttle-rate="+strconv.FormatFloat(f.ThrottleRate, 'g', -1, 64))
	}
	if f.ThrottleProbability != 0 {
		parts = append(parts, "throttle-probability="+strconv.FormatFloat(f.ThrottleProbability, 'g', -1, 64))
	}
	if f.ErrorProbability != 0 {
		parts = append(parts, "error-probability="+strconv.FormatFloat(f.ErrorProbability, 'g', -1, 64))
	}
	if f.ErrorStatus != 0 {
		parts = append(parts, "error-status="+strconv.Itoa(f.ErrorStatus))
	}
	return api + ":" + strings.Join(parts, ",")
}
