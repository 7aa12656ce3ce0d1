package mount

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	mountutils "k8s.io/mount-utils"
)

// fakeOS is mount-utils' stateful FakeMounter plus the force unmount the mounter may use.
type fakeOS struct {
	*mountutils.FakeMounter
	forced int
}

func (f *fakeOS) UnmountWithForce(target string, _ time.Duration) error {
	f.forced++
	return f.Unmount(target)
}

func newTestMounter(t *testing.T, mps []mountutils.MountPoint) (*Mounter, *fakeOS, string) {
	t.Helper()
	dir := t.TempDir()
	recs, err := NewRecords(filepath.Join(dir, "records"))
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeOS{FakeMounter: mountutils.NewFakeMounter(mps)}
	state := filepath.Join(dir, "state")
	if err := os.MkdirAll(state, 0o755); err != nil {
		t.Fatal(err)
	}
	return New(Config{OS: f, Records: recs, StateDir: state}), f, dir
}

var specA = Spec{Source: fsID + ":/", FSType: "efs", Options: []string{"tls", "accesspoint=" + apID}}

func TestPublishIdempotent(t *testing.T) {
	m, f, dir := newTestMounter(t, nil)
	target := filepath.Join(dir, "pods", "target")
	for i := 0; i < 3; i++ {
		if err := m.Publish(t.Context(), "vol-a", target, specA, false); err != nil {
			t.Fatalf("publish %d: %v", i, err)
		}
	}
	if n := len(f.MountPoints); n != 1 {
		t.Fatalf("%d mounts after three publishes, want 1", n)
	}
	// same volume, options in another order: still the same mount
	reordered := Spec{Source: specA.Source, FSType: "efs", Options: []string{"accesspoint=" + apID, "tls"}}
	if err := m.Publish(t.Context(), "vol-a", target, reordered, false); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		volume string
		spec   Spec
	}{
		{"other volume", "vol-b", specA},
		{"same volume other options", "vol-a", Spec{Source: specA.Source, FSType: "efs", Options: []string{"tls", "ro"}}},
	} {
		if err := m.Publish(t.Context(), tc.volume, target, tc.spec, false); !errors.Is(err, ErrAlreadyPublished) {
			t.Errorf("%s: err = %v, want ErrAlreadyPublished", tc.name, err)
		}
	}
	if err := m.Unpublish(t.Context(), "vol-a", target); err != nil {
		t.Fatal(err)
	}
	if len(f.MountPoints) != 0 {
		t.Fatalf("mounts left: %v", f.MountPoints)
	}
	if _, err := os.Stat(target); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("target not removed: %v", err)
	}
	if _, ok, _ := m.cfg.Records.Get(target); ok {
		t.Fatal("record left after unpublish")
	}
	// never-mounted and missing targets
	if err := m.Unpublish(t.Context(), "vol-a", target); err != nil {
		t.Fatalf("unpublish of a missing target: %v", err)
	}
	empty := filepath.Join(dir, "empty")
	_ = os.Mkdir(empty, 0o755)
	if err := m.Unpublish(t.Context(), "vol-a", empty); err != nil {
		t.Fatalf("unpublish of a never-mounted target: %v", err)
	}
	if _, err := os.Stat(empty); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("never-mounted target directory not removed")
	}
}

func TestPublishFailureCleansUp(t *testing.T) {
	m, f, dir := newTestMounter(t, nil)
	f.MountCheckErrors = map[string]error{}
	target := filepath.Join(dir, "t")
	failing := &failOS{fakeOS: f}
	m.cfg.OS = failing
	err := m.Publish(t.Context(), "vol-a", target, specA, false)
	if !errors.Is(err, ErrMount) {
		t.Fatalf("err = %v, want ErrMount", err)
	}
	if _, err := os.Stat(target); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("target created by the failed publish was left behind")
	}
	if recs, _ := m.cfg.Records.List(); len(recs) != 0 {
		t.Fatalf("records left: %v", recs)
	}
}

type failOS struct{ *fakeOS }

func (f *failOS) Mount(string, string, string, []string) error {
	return errors.New("mount.nfs4: access denied by server")
}

func TestSingleWriter(t *testing.T) {
	m, _, dir := newTestMounter(t, nil)
	t1, t2 := filepath.Join(dir, "t1"), filepath.Join(dir, "t2")
	if err := m.Publish(t.Context(), "vol-a", t1, specA, true); err != nil {
		t.Fatal(err)
	}
	if err := m.Publish(t.Context(), "vol-a", t2, specA, true); !errors.Is(err, ErrSingleWriter) {
		t.Fatalf("second target: err = %v, want ErrSingleWriter", err)
	}
	if err := m.Publish(t.Context(), "vol-a", t2, specA, false); !errors.Is(err, ErrSingleWriter) {
		t.Fatalf("multi-writer publish of a single-writer volume: err = %v, want ErrSingleWriter", err)
	}
	if err := m.Unpublish(t.Context(), "vol-a", t1); err != nil {
		t.Fatal(err)
	}
	if err := m.Publish(t.Context(), "vol-a", t2, specA, true); err != nil {
		t.Fatalf("after unpublish: %v", err)
	}
}

func TestUnpublishStackedAndForced(t *testing.T) {
	m, f, dir := newTestMounter(t, nil)
	target := filepath.Join(dir, "t")
	_ = os.Mkdir(target, 0o755)
	for i := 0; i < 3; i++ {
		_ = f.Mount(specA.Source, target, "nfs4", nil)
	}
	// --force-unmount-after-timeout --unmount-timeout=0: upstream v3.4.1 passes 0 to mount-utils' UnmountWithForce,
	// whose plain umount's deadline has then already passed, so it forces at once; 0 must still force here.
	m.cfg.ForceUnmount, m.cfg.ForceUnmountAfter = true, 0
	if err := m.Unpublish(t.Context(), "vol-a", target); err != nil {
		t.Fatal(err)
	}
	// FakeMounter drops every layer at once; the real stacked case is the loop in Unpublish.
	if f.forced == 0 || len(f.MountPoints) != 0 {
		t.Fatalf("forced %d unmounts, %d mounts left; want at least 1 and 0", f.forced, len(f.MountPoints))
	}
}

// TestAdoptUnrecordedMounts covers mounts made before publish records existed (upgrade from the upstream driver).
func TestAdoptUnrecordedMounts(t *testing.T) {
	cases := []struct {
		name    string
		mp      mountutils.MountPoint
		state   string // efs-utils state file JSON for port 20100, or ""
		spec    Spec
		wantErr error
	}{
		{name: "tls mount with state", mp: mountutils.MountPoint{Device: "127.0.0.1:/", Type: "nfs4", Opts: []string{"rw", "port=20100"}},
			state: `{"fsId":"` + fsID + `","accessPoint":"` + apID + `"}`, spec: specA},
		{name: "tls mount of another access point", mp: mountutils.MountPoint{Device: "127.0.0.1:/", Type: "nfs4", Opts: []string{"port=20100"}},
			state: `{"fsId":"` + fsID + `","accessPoint":"fsap-99999999999999999"}`, spec: specA, wantErr: ErrAlreadyPublished},
		{name: "tls mount of another file system", mp: mountutils.MountPoint{Device: "127.0.0.1:/", Type: "nfs4", Opts: []string{"port=20100"}},
			state: `{"fsId":"fs-99999999"}`, spec: specA, wantErr: ErrAlreadyPublished},
		// efs-utils 2.x/3.x non-TLS mounts through efs-proxy: state file without fsId (the name carries it)
		{name: "efs-proxy plain mount", mp: mountutils.MountPoint{Device: "127.0.0.1:/", Type: "nfs4", Opts: []string{"port=20100"}},
			state: `{"pid":1,"cmd":["/usr/bin/efs-proxy","/var/run/efs/stunnel-config.x"]}`, spec: Spec{Source: fsID + ":/", FSType: "efs"}},
		{name: "efs-proxy plain mount asked with an access point", mp: mountutils.MountPoint{Device: "127.0.0.1:/", Type: "nfs4", Opts: []string{"port=20100"}},
			state: `{"pid":1,"cmd":["/usr/bin/efs-proxy","/var/run/efs/stunnel-config.x"]}`, spec: specA, wantErr: ErrAlreadyPublished},
		{name: "dns mount", mp: mountutils.MountPoint{Device: "us-east-1a." + fsID + ".efs.us-east-1.amazonaws.com:/", Type: "nfs4"},
			spec: Spec{Source: fsID + ":/", FSType: "efs"}},
		{name: "dns mount of another path", mp: mountutils.MountPoint{Device: fsID + ".efs.us-east-1.amazonaws.com:/x", Type: "nfs4"},
			spec: Spec{Source: fsID + ":/", FSType: "efs"}, wantErr: ErrAlreadyPublished},
		{name: "ip mount cannot be told apart", mp: mountutils.MountPoint{Device: "10.0.0.5:/", Type: "nfs4"}, spec: Spec{Source: fsID + ":/", FSType: "efs"}},
		{name: "not nfs", mp: mountutils.MountPoint{Device: "tmpfs", Type: "tmpfs"}, spec: specA, wantErr: ErrAlreadyPublished},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m, f, dir := newTestMounter(t, nil)
			target := filepath.Join(dir, "pod", "mount")
			_ = os.MkdirAll(target, 0o755)
			tc.mp.Path = target
			f.MountPoints = append(f.MountPoints, tc.mp)
			if tc.state != "" {
				name := fsID + "." + replaceSlashes(target) + ".20100"
				if err := os.WriteFile(filepath.Join(m.cfg.StateDir, name), []byte(tc.state), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			err := m.Publish(t.Context(), "vol-a", target, tc.spec, false)
			if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil && err != nil) {
				t.Fatalf("err = %v, want %v", err, tc.wantErr)
			}
			_, recorded, _ := m.cfg.Records.Get(target)
			if recorded != (tc.wantErr == nil) {
				t.Fatalf("recorded = %v, want %v", recorded, tc.wantErr == nil)
			}
		})
	}
}

func replaceSlashes(p string) string {
	out := []byte(p[1:])
	for i, c := range out {
		if c == '/' {
			out[i] = '.'
		}
	}
	return string(out)
}

func TestRecordsIgnoreTornFiles(t *testing.T) {
	r, err := NewRecords(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(r.file("/t"), []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := r.Get("/t"); ok || err != nil {
		t.Fatalf("torn record: ok=%v err=%v, want absent", ok, err)
	}
}
