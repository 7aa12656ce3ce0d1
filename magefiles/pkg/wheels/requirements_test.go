package wheels

import (
	"strconv"
	"strings"
	"testing"
)

const (
	hashA = "86302b2226c743b9eec7915a4c6cfaffd338ae03989cd9ee181078ef39d1ab39"
	hashB = "1111111111111111111111111111111111111111111111111111111111111111"
)

func TestParseRequirements(t *testing.T) {
	rows := []struct {
		name    string
		content string
		want    string // name==version:hashes:line-lastline per requirement, or the error substring after "ERR "
	}{
		{"pinned with comments and RPM notes",
			"# header\n# attrs==20.3.0  provided by RPM python3-attrs\n\nbotocore==1.34.140 --hash=sha256:" + hashA + "  # from efs-utils 2.3.0\n",
			"botocore==1.34.140:" + hashA[:6] + ":4-4"},
		{"continuation lines, two hashes sorted",
			"botocore==1.34.140 \\\n    --hash=sha256:" + hashA + " \\\n    --hash sha256:" + hashB + "\nsix==1.15.0 --hash=sha256:" + hashB + "\n",
			"botocore==1.34.140:" + hashB[:6] + "," + hashA[:6] + ":1-3 six==1.15.0:" + hashB[:6] + ":4-4"},
		{"unpinned", "botocore --hash=sha256:" + hashA, `ERR line 1: "botocore" is not pinned`},
		{"range", "botocore>=1.34 --hash=sha256:" + hashA, `ERR line 1: "botocore>=1.34" is not pinned`},
		{"wildcard", "botocore==1.34.* --hash=sha256:" + hashA, `ERR line 1: "botocore==1.34.*" is not pinned`},
		{"no hash", "# c\nbotocore==1.34.140\n", "ERR line 2: botocore==1.34.140 has no --hash=sha256"},
		{"md5 hash", "botocore==1.34.140 --hash=md5:abc", `ERR hash "md5:abc": want sha256:<64 lower-case hex digits>`},
		{"short hash", "botocore==1.34.140 --hash=sha256:abc", `ERR hash "sha256:abc"`},
		{"option line", "--index-url https://example.com/simple", `ERR line 1: "--index-url": options are not accepted`},
		{"url", "https://example.com/x.whl", "ERR is not pinned"},
		{"marker", "botocore==1.34.140; python_version>'3' --hash=sha256:" + hashA, "ERR is not pinned"},
		{"extras", "botocore[crt]==1.34.140 --hash=sha256:" + hashA, "ERR is not pinned"},
		{"other option after pin", "botocore==1.34.140 --hash=sha256:" + hashA + " --no-binary", `ERR "--no-binary": only --hash`},
		{"local version", "botocore==1.34.140+local --hash=sha256:" + hashA, `ERR version "1.34.140+local": want an exact public version`},
		{"duplicate", "a==1 --hash=sha256:" + hashA + "\nA==2 --hash=sha256:" + hashA, "ERR line 2: A is already pinned on line 1"},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			reqs, err := ParseRequirements("requirements.txt.ocp", row.content)
			if want, isErr := strings.CutPrefix(row.want, "ERR "); isErr {
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Fatalf("ParseRequirements = %v, %v; want an error containing %q", reqs, err, want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range reqs {
				var hs []string
				for _, h := range r.Hashes {
					hs = append(hs, h[:6])
				}
				got = append(got, r.String()+":"+strings.Join(hs, ",")+":"+itoa(r.Line)+"-"+itoa(r.LastLine))
			}
			if strings.Join(got, " ") != row.want {
				t.Fatalf("got %s\nwant %s", strings.Join(got, " "), row.want)
			}
		})
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

func TestFormatParsesBack(t *testing.T) {
	in := "botocore==1.34.140 --hash=sha256:" + hashB + " --hash=sha256:" + hashA + "  # pinned by hand\n"
	reqs, err := ParseRequirements("r", in)
	if err != nil {
		t.Fatal(err)
	}
	again, err := ParseRequirements("r", reqs[0].Format())
	if err != nil {
		t.Fatalf("Format output does not parse: %v\n%s", err, reqs[0].Format())
	}
	if again[0].String() != reqs[0].String() || strings.Join(again[0].Hashes, ",") != strings.Join(reqs[0].Hashes, ",") {
		t.Fatalf("round trip changed the requirement: %+v vs %+v", again[0], reqs[0])
	}
	if !strings.HasPrefix(reqs[0].Format(), "# pinned by hand\nbotocore==1.34.140 \\\n    --hash=sha256:"+hashB) {
		t.Fatalf("Format = %q", reqs[0].Format())
	}
}

func FuzzParseRequirements(f *testing.F) {
	f.Add("botocore==1.34.140 --hash=sha256:" + hashA)
	f.Add("botocore==1.34.140 \\\n --hash=sha256:" + hashA + " # c\n# x\n")
	f.Add("a>=1\n")
	f.Add("--hash\n")
	f.Fuzz(func(t *testing.T, content string) {
		reqs, err := ParseRequirements("fuzz", content)
		if err != nil {
			return
		}
		for _, r := range reqs {
			if len(r.Hashes) == 0 || r.Version == "" || r.Line < 1 || r.LastLine < r.Line {
				t.Fatalf("accepted an incomplete requirement %+v", r)
			}
			again, err := ParseRequirements("fuzz", r.Format())
			if err != nil || len(again) != 1 || again[0].String() != r.String() || strings.Join(again[0].Hashes, ",") != strings.Join(r.Hashes, ",") {
				t.Fatalf("Format of %+v does not parse back: %v %+v", r, err, again)
			}
		}
	})
}
