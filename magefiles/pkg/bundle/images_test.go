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
		{"bad placeholder", "images:\n- {placeholder: driver, relatedImage: d, development: quay.io/a/b:1}\n", `placeholder "driver"`},
		{"twice", "images:\n- {placeholder: A_IMAGE, relatedImage: a, development: quay.io/a/b:1}\n- {placeholder: A_IMAGE, relatedImage: b, development: quay.io/a/b:1}\n", "listed twice"},
		{"no related name", "images:\n- {placeholder: A_IMAGE, development: quay.io/a/b:1}\n", "relatedImage is empty"},
		{"bad development", "images:\n- {placeholder: A_IMAGE, relatedImage: a, development: 'UPPER/Case:x'}\n", "development"},
		{"unknown field", "images:\n- {placeholder: A_IMAGE, relatedImage: a, development: quay.io/a/b:1, digest: x}\n", "unknown field"},
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
		{Placeholder: "OPERATOR_IMAGE", RelatedImage: "op", Built: "aws-efs-csi-driver-operator", Development: "quay.io/o/op:latest"},
		{Placeholder: "DRIVER_IMAGE", RelatedImage: "drv", Built: "aws-efs-csi-driver", Development: "quay.io/o/drv:latest"},
		{Placeholder: "TOOLS_IMAGE", RelatedImage: "tools", Development: "quay.io/o/tools:latest"},
	}
	digests := []imagebuild.Digest{
		{Name: "aws-efs-csi-driver-operator", Digest: digestA, Reference: "reg.example.com/o/aws-efs-csi-driver-operator@" + digestA},
		{Name: "aws-efs-csi-driver", Digest: digestB},
	}
	pins := map[string]string{"TOOLS_IMAGE": "quay.io/o/tools@" + digestB}
	got, err := Resolve(images, pins, digests)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		ref, from string
		pinned    bool
		why       string
	}{
		{"reg.example.com/o/aws-efs-csi-driver-operator@" + digestA, FromDigests, true, ""},
		{"quay.io/o/drv:latest", FromDevelopment, false, "REGISTRY was not set"},
		{"quay.io/o/tools@" + digestB, FromPins, true, ""},
	}
	for i, w := range want {
		g := got[i]
		if g.Ref != w.ref || g.From != w.from || g.Pinned != w.pinned || !strings.Contains(g.Why, w.why) {
			t.Errorf("%s: got %+v, want %+v", g.Placeholder, g, w)
		}
	}
	if len(Unpinned(got)) != 1 {
		t.Errorf("Unpinned = %v, want only DRIVER_IMAGE", Unpinned(got))
	}
	// A pin wins over digests.json.
	got, _ = Resolve(images, map[string]string{"OPERATOR_IMAGE": "quay.io/o/op@" + digestB}, digests)
	if got[0].From != FromPins {
		t.Errorf("OPERATOR_IMAGE from %s, want %s", got[0].From, FromPins)
	}
	if _, err := Resolve(images, map[string]string{"NOPE_IMAGE": "quay.io/o/x@" + digestA}, nil); err == nil || !strings.Contains(err.Error(), "NOPE_IMAGE") {
		t.Fatalf("unknown pin: error %v, want one naming NOPE_IMAGE", err)
	}
}
