package main

import (
	"strings"
	"testing"
)

func TestValidate(t *testing.T) {
	tests := []struct {
		name    string
		opts    Options
		wantErr string
	}{
		{name: "controller", opts: Options{Mode: ModeController, Endpoint: "unix:///tmp/csi.sock"}},
		{name: "node", opts: Options{Mode: ModeNode, Endpoint: "unix:///tmp/csi.sock"}},
		{name: "all", opts: Options{Mode: ModeAll, Endpoint: "unix:///tmp/csi.sock"}},
		{name: "unknown mode", opts: Options{Mode: "both", Endpoint: "unix:///tmp/csi.sock"}, wantErr: `--mode "both": want one of controller, node, all`},
		{name: "tcp endpoint", opts: Options{Mode: ModeAll, Endpoint: "tcp://1.2.3.4:10"}, wantErr: `--endpoint "tcp://1.2.3.4:10": want unix:///`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.opts.Validate()
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Validate() = %v, want error containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestRunVersionAndBadFlags(t *testing.T) {
	if code := run([]string{"--version"}); code != 0 {
		t.Errorf("--version exit code = %d, want 0", code)
	}
	if code := run([]string{"--mode=sideways"}); code != 2 {
		t.Errorf("bad --mode exit code = %d, want 2", code)
	}
	if code := run([]string{"--no-such-flag"}); code != 2 {
		t.Errorf("unknown flag exit code = %d, want 2", code)
	}
}
