package nfsbackend

import (
	"bufio"
	"bytes"
	"strings"
	"testing"
)

func TestRequestValidate(t *testing.T) {
	good := Request{Export: "/", Target: "/mnt/x", MountNamespace: 4026531840, MountTable: "/var/run/efs/nfs4-mounts"}
	rows := []struct {
		name    string
		edit    func(*Request)
		wantErr string
	}{
		{"good", func(*Request) {}, ""},
		{"no table", func(r *Request) { r.MountTable = "" }, ""},
		{"relative export", func(r *Request) { r.Export = "dir" }, "export"},
		{"relative target", func(r *Request) { r.Target = "mnt" }, "target"},
		{"unclean target", func(r *Request) { r.Target = "/mnt/../etc" }, "target"},
		{"no namespace", func(r *Request) { r.MountNamespace = 0 }, "mountNamespace"},
		{"relative table", func(r *Request) { r.MountTable = "mounts" }, "mountTable"},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			r := good
			row.edit(&r)
			err := r.Validate()
			if row.wantErr == "" && err != nil || row.wantErr != "" && (err == nil || !strings.Contains(err.Error(), row.wantErr)) {
				t.Fatalf("Validate() = %v, want an error naming %q", err, row.wantErr)
			}
		})
	}
}

func TestMessageRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	in := Request{Export: "/a", Target: "/t", Certificate: strings.Repeat("x", 5000)}
	if err := WriteMessage(&buf, in); err != nil {
		t.Fatal(err)
	}
	var out Request
	if err := ReadMessage(bufio.NewReaderSize(&buf, 16), &out); err != nil || out != in {
		t.Fatalf("ReadMessage = %+v, %v", out, err)
	}
	huge := bufio.NewReader(strings.NewReader(strings.Repeat("y", maxMessage+10) + "\n"))
	if err := ReadMessage(huge, &out); err == nil || !strings.Contains(err.Error(), "longer than") {
		t.Fatalf("oversized message: %v", err)
	}
}
