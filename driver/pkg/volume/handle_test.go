package volume

import (
	"errors"
	"strings"
	"testing"
)

var handleCases = []struct {
	name    string
	in      string
	want    Handle
	wantStr string
	wantErr string
}{
	{name: "fs only", in: "fs-0123abcd", want: Handle{FileSystemID: "fs-0123abcd"}, wantStr: "fs-0123abcd"},
	{name: "fs trailing colon", in: "fs-0123abcd:", want: Handle{FileSystemID: "fs-0123abcd"}, wantStr: "fs-0123abcd"},
	{name: "fs path", in: "fs-0123abcd:/a/b/", want: Handle{FileSystemID: "fs-0123abcd", Path: "/a/b"}, wantStr: "fs-0123abcd:/a/b"},
	{name: "relative path", in: "fs-0123abcd:a/./b", want: Handle{FileSystemID: "fs-0123abcd", Path: "a/b"}, wantStr: "fs-0123abcd:a/b"},
	{name: "fs ap", in: "fs-0123abcd::fsap-0123456789abcdef0", want: Handle{FileSystemID: "fs-0123abcd", AccessPointID: "fsap-0123456789abcdef0"}, wantStr: "fs-0123abcd::fsap-0123456789abcdef0"},
	{name: "fs path ap", in: "fs-0123abcd:/x:fsap-0123abcd", want: Handle{FileSystemID: "fs-0123abcd", Path: "/x", AccessPointID: "fsap-0123abcd"}, wantStr: "fs-0123abcd:/x:fsap-0123abcd"},
	{name: "typed", in: "efs:fs-0123abcd::fsap-0123abcd", want: Handle{Typed: true, FileSystemID: "fs-0123abcd", AccessPointID: "fsap-0123abcd"}, wantStr: "efs:fs-0123abcd::fsap-0123abcd"},
	{name: "typed fs only", in: "efs:fs-0123abcd", want: Handle{Typed: true, FileSystemID: "fs-0123abcd"}, wantStr: "efs:fs-0123abcd"},
	{name: "typed path", in: "efs:fs-0123abcd:/data", want: Handle{Typed: true, FileSystemID: "fs-0123abcd", Path: "/data"}, wantStr: "efs:fs-0123abcd:/data"},
	{name: "dotdot cleaned away", in: "fs-0123abcd:/a/../b", want: Handle{FileSystemID: "fs-0123abcd", Path: "/b"}, wantStr: "fs-0123abcd:/b"},
	{name: "empty", in: "", wantErr: "volume ID is empty"},
	{name: "bad fs", in: "fs-XYZ", wantErr: `file system ID "fs-XYZ"`},
	{name: "short fs", in: "fs-0123", wantErr: `file system ID "fs-0123"`},
	{name: "bad ap", in: "fs-0123abcd::ap-1", wantErr: `access point ID "ap-1"`},
	{name: "too many legacy", in: "fs-0123abcd:/a:fsap-0123abcd:x", wantErr: "too many"},
	{name: "too many typed", in: "efs:fs-0123abcd:/a:fsap-0123abcd:x", wantErr: "too many"},
	{name: "type only", in: "efs", wantErr: "no file system ID"},
	{name: "s3files", in: "s3files:fs-0123abcd", wantErr: "S3 Files"},
	{name: "climbing relative", in: "fs-0123abcd:../etc", wantErr: `climbs above`},
	{name: "unknown type", in: "nfs:fs-0123abcd", wantErr: `file system ID "nfs"`},
}

func TestParseHandle(t *testing.T) {
	for _, tt := range handleCases {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseHandle(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errors.Is(err, ErrInvalidHandle) {
					t.Fatalf("ParseHandle(%q) error = %v, want ErrInvalidHandle containing %q", tt.in, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseHandle(%q) = %v", tt.in, err)
			}
			if got != tt.want {
				t.Fatalf("ParseHandle(%q) = %+v, want %+v", tt.in, got, tt.want)
			}
			if got.String() != tt.wantStr {
				t.Fatalf("String() = %q, want %q", got.String(), tt.wantStr)
			}
		})
	}
}

func TestMountSource(t *testing.T) {
	tests := []struct{ in, want string }{
		{"fs-0123abcd", "fs-0123abcd:/"},
		{"fs-0123abcd:/a", "fs-0123abcd:/a"},
		{"efs:fs-0123abcd::fsap-0123abcd", "fs-0123abcd:/"},
	}
	for _, tt := range tests {
		h, err := ParseHandle(tt.in)
		if err != nil {
			t.Fatal(err)
		}
		if got := h.MountSource(); got != tt.want {
			t.Errorf("MountSource(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func FuzzParseHandle(f *testing.F) {
	for _, tt := range handleCases {
		f.Add(tt.in)
	}
	f.Fuzz(func(t *testing.T, s string) {
		h, err := ParseHandle(s)
		if err != nil {
			return
		}
		again, err := ParseHandle(h.String())
		if err != nil {
			t.Fatalf("ParseHandle(String()) of %q (%q) failed: %v", s, h.String(), err)
		}
		if again != h {
			t.Fatalf("round trip of %q: %+v != %+v", s, again, h)
		}
		for _, elem := range strings.Split(h.Path, "/") {
			if elem == ".." {
				t.Fatalf("parsed path %q contains ..", h.Path)
			}
		}
	})
}
