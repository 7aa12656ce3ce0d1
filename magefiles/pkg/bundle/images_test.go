package bundle

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openshift/aws-efs-csi/magefiles/pkg/imagebuild"
)

const (
	digestA = "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	digestB = "sha256:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
)

func TestParsePins(t *testing.T) {
	for _, tc := range []struct {
		name, input string
		want        map[string]string
		wantErr     string
	}{
		{name: "empty", input: "", want: map[string]string{}},
		{name: "comments and blanks", input: "# pins\n\n  DRIVER_IMAGE = quay.io/o/d@" + digestA + "  \n",
			want: map[string]string{"DRIVER_IMAGE": "quay.io/o/d@" + digestA}},
		{name: "two", input: "DRIVER_IMAGE=quay.io/o/d@" + digestA + "\nTOOLS_IMAGE=registry.example.com:5000/t/tools@" + digestB,
			want: map[string]string{"DRIVER_IMAGE": "quay.io/o/d@" + digestA, "TOOLS_IMAGE": "registry.example.com:5000/t/tools@" + digestB}},
		{name: "tag, not digest", input: "DRIVER_IMAGE=quay.io/o/d:latest", wantErr: "line 1: DRIVER_IMAGE \"quay.io/o/d:latest\" is not pinned by digest"},
		{name: "short digest", input: "DRIVER_IMAGE=quay.io/o/d@sha256:abc", wantErr: "is not pinned by digest"},
		{name: "no equals", input: "DRIVER_IMAGE quay.io/o/d@" + digestA, wantErr: "line 1"},
		{name: "lower-case key", input: "driver_image=quay.io/o/d@" + digestA, wantErr: "want PLACEHOLDER="},
		{name: "key without _IMAGE", input: "DRIVER=quay.io/o/d@" + digestA, wantErr: "want PLACEHOLDER="},
		{name: "duplicate", input: "DRIVER_IMAGE=quay.io/o/d@" + digestA + "\nDRIVER_IMAGE=quay.io/o/d@" + digestB, wantErr: "line 2: DRIVER_IMAGE is given twice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParsePins("pins.txt", strings.NewReader(tc.input))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
			for k, v := range tc.want {
				if got[k] != v {
					t.Errorf("%s = %q, want %q", k, got[k], v)
				}
			}
		})
	}
}

// FuzzParsePins checks that nothing panics and that every accepted pin is a digest reference that parses back to
// itself.
func FuzzParsePins(f *testing.F) {
	f.Add("DRIVER_IMAGE=quay.io/o/d@" + digestA)
	f.Add("# c\n\nTOOLS_IMAGE=localhost:5000/a/b@" + digestB + "\n")
	f.Add("X_IMAGE=@")
	f.Fuzz(func(t *testing.T, input string) {
		pins, err := ParsePins("fuzz", strings.NewReader(input))
		if err != nil {
			return
		}
		var lines []string
		for k, v := range pins {
			if !strings.Contains(v, "@sha256:") {
				t.Fatalf("%s=%q accepted without a digest", k, v)
			}
			lines = append(lines, k+"="+v)
		}
		again, err := ParsePins("again", strings.NewReader(strings.Join(lines, "\n")))
		if err != nil || len(again) != len(pins) {
			t.Fatalf("formatted pins %q do not parse back: %v", lines, err)
		}
	})
}

func TestReadImagesRejects(t *testing.T) {
	for _, tc := range []struct{ name, yaml, wantErr string }{
		{"no images", "images: []\n", "no images"},
		{"bad placeholder", "images:\n- {placeholder: driver, relatedImage: d, digestFrom: nudge:d}\n", `placeholder "driver"`},
		{"twice", "images:\n- {placeholder: A_IMAGE, relatedImage: a, digestFrom: nudge:a}\n- {placeholder: A_IMAGE, relatedImage: b, digestFrom: nudge:a}\n", "listed twice"},
		{"no related name", "images:\n- {placeholder: A_IMAGE, digestFrom: nudge:a}\n", "relatedImage is empty"},
		{"bad digestFrom", "images:\n- {placeholder: A_IMAGE, relatedImage: a, digestFrom: 'somewhere'}\n", `digestFrom "somewhere": want nudge:<Konflux component> or payload:<release payload image name>`},
		{"unknown field", "images:\n- {placeholder: A_IMAGE, relatedImage: a, digestFrom: nudge:a, development: quay.io/a/b:1}\n", "unknown field"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "images.yaml")
			if err := os.WriteFile(p, []byte(tc.yaml), 0o644); err != nil {
				t.Fatal(err)
			}
			if _, err := ReadImages(p); err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}

func TestResolve(t *testing.T) {
	images := []Image{
		{Placeholder: "OPERATOR_IMAGE", RelatedImage: "op", Built: "aws-efs-csi-driver-operator", DigestFrom: "nudge:aws-efs-csi-driver-operator"},
		{Placeholder: "DRIVER_IMAGE", RelatedImage: "drv", Built: "aws-efs-csi-driver", DigestFrom: "nudge:aws-efs-csi-driver"},
		{Placeholder: "TOOLS_IMAGE", RelatedImage: "tools", DigestFrom: "payload:tools"},
		{Placeholder: "RBAC_IMAGE", RelatedImage: "rbac", DigestFrom: "payload:kube-rbac-proxy"},
	}
	source := map[string]string{
		"op": "quay.io/build/op@" + digestA, "drv": "quay.io/build/drv@" + PlaceholderDigest,
		"tools": "registry.example.com/o/tools@" + digestA, "rbac": "registry.example.com/o/rbac@" + PlaceholderDigest,
	}
	mirrors := MirrorSet{Mirrors: map[string][]string{"registry.example.com/released/drv": {"quay.io/build/drv"}}}
	digests := []imagebuild.Digest{
		{Name: "aws-efs-csi-driver-operator", Digest: digestA, Reference: "reg.example.com/o/aws-efs-csi-driver-operator@" + digestA},
		{Name: "aws-efs-csi-driver", Digest: digestB},
	}
	pins := map[string]string{"TOOLS_IMAGE": "quay.io/o/tools@" + digestB}
	got, err := Resolve(images, source, mirrors, pins, digests)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct{ ref, from, unrecorded string }{
		{"reg.example.com/o/aws-efs-csi-driver-operator@" + digestA, FromDigests, ""},
		// Built but not pushed: the CSV's reference, under the name it is released with.
		{"registry.example.com/released/drv@" + PlaceholderDigest, FromCSV, "first push digest not recorded: the first push build of the Konflux component aws-efs-csi-driver nudges it"},
		{"quay.io/o/tools@" + digestB, FromPins, ""},
		{"registry.example.com/o/rbac@" + PlaceholderDigest, FromCSV, "payload digest not recorded: copy it from `oc adm release info --image-for=kube-rbac-proxy`"},
	}
	for i, w := range want {
		g := got[i]
		if g.Ref != w.ref || g.From != w.from || !strings.HasPrefix(g.Unrecorded, w.unrecorded) || (w.unrecorded == "") != (g.Unrecorded == "") {
			t.Errorf("%s: got %+v, want %+v", g.Placeholder, g, w)
		}
	}
	if n := len(Unrecorded(got)); n != 2 {
		t.Errorf("Unrecorded = %v, want DRIVER_IMAGE and RBAC_IMAGE", Unrecorded(got))
	}
	// A pin wins over digests.json.
	got, _ = Resolve(images, source, mirrors, map[string]string{"OPERATOR_IMAGE": "quay.io/o/op@" + digestB}, digests)
	if got[0].From != FromPins {
		t.Errorf("OPERATOR_IMAGE from %s, want %s", got[0].From, FromPins)
	}
	if _, err := Resolve(images, source, mirrors, map[string]string{"NOPE_IMAGE": "quay.io/o/x@" + digestA}, nil); err == nil || !strings.Contains(err.Error(), "NOPE_IMAGE") {
		t.Fatalf("unknown pin: error %v, want one naming NOPE_IMAGE", err)
	}
	delete(source, "rbac")
	if _, err := Resolve(images, source, mirrors, nil, nil); err == nil || !strings.Contains(err.Error(), "spec.relatedImages has no image named rbac") {
		t.Fatalf("image missing from the CSV: error %v", err)
	}
}
