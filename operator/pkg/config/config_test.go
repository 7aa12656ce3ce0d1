package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFromEnvAndValidate(t *testing.T) {
	env := map[string]string{
		EnvDriverImage:              "quay.io/x/driver:1",
		EnvProvisionerImage:         "quay.io/x/prov:1",
		EnvNodeDriverRegistrarImage: "quay.io/x/reg:1",
		EnvLivenessProbeImage:       "quay.io/x/live:1",
		EnvKubeRBACProxyImage:       "quay.io/x/proxy:1",
		EnvToolsImage:               "quay.io/x/tools:1",
		EnvRoleARN:                  " arn:aws:iam::123456789012:role/c ",
		EnvNodeRoleARN:              "arn:aws:iam::123456789012:role/n",
	}
	cfg := FromEnv(func(k string) string { return env[k] }, "ns")
	if err := cfg.Validate(); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	if cfg.RoleARN != "arn:aws:iam::123456789012:role/c" || cfg.NodeRoleARN != "arn:aws:iam::123456789012:role/n" {
		t.Fatalf("role ARNs = %q, %q", cfg.RoleARN, cfg.NodeRoleARN)
	}
	if cfg.Images.Tools != "quay.io/x/tools:1" {
		t.Fatalf("tools image = %q", cfg.Images.Tools)
	}

	delete(env, EnvToolsImage)
	err := FromEnv(func(k string) string { return env[k] }, "").Validate()
	if err == nil {
		t.Fatal("Validate with no namespace and no TOOLS_IMAGE: want an error")
	}
	for _, want := range []string{"TOOLS_IMAGE", "namespace"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %s", err, want)
		}
	}
}

func TestReadFIPS(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name    string
		content *string
		dir     bool
		want    bool
		wantErr bool
	}{
		{name: "on", content: ptr("1\n"), want: true},
		{name: "off", content: ptr("0\n"), want: false},
		{name: "missing file", content: nil, want: false},
		{name: "unexpected value: off, with a warning", content: ptr("yes"), wantErr: true},
		{name: "unreadable: off, with a warning", dir: true, wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(dir, tc.name)
			if tc.content != nil {
				if err := os.WriteFile(p, []byte(*tc.content), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			if tc.dir {
				if err := os.Mkdir(p, 0o700); err != nil {
					t.Fatal(err)
				}
			}
			got, err := ReadFIPS(p)
			if (err != nil) != tc.wantErr {
				t.Fatalf("ReadFIPS warning = %v, want one: %v", err, tc.wantErr)
			}
			if got != tc.want {
				t.Fatalf("ReadFIPS = %v, want %v", got, tc.want)
			}
		})
	}
}

func ptr(s string) *string { return &s }
