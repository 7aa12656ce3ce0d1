package gobuild

import (
	"strings"
	"testing"
)

func TestParseJobs(t *testing.T) {
	tests := []struct {
		value   string
		want    int
		wantErr bool
	}{
		{value: "", want: 4},
		{value: "1", want: 1},
		{value: "16", want: 16},
		{value: "0", wantErr: true},
		{value: "-2", wantErr: true},
		{value: "many", wantErr: true},
	}
	for _, tt := range tests {
		got, err := ParseJobs(tt.value, 4)
		if tt.wantErr {
			if err == nil || !strings.Contains(err.Error(), "BUILD_JOBS") || !strings.Contains(err.Error(), "positive integer") {
				t.Errorf("ParseJobs(%q) = %d, %v; want an error naming BUILD_JOBS", tt.value, got, err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseJobs(%q) = %d, %v; want %d", tt.value, got, err, tt.want)
		}
	}
}

func TestProgramsAreTheTwoShippedBinaries(t *testing.T) {
	var got []string
	for _, p := range Programs() {
		got = append(got, p.Module+":"+p.Package()+":"+p.VersionPackage)
	}
	want := []string{
		"driver:./cmd/aws-efs-csi-driver:github.com/openshift/aws-efs-csi/driver/pkg/version",
		"operator:./cmd/aws-efs-csi-driver-operator:github.com/openshift/aws-efs-csi/driver/pkg/version",
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("Programs = %v, want %v", got, want)
	}
}

func TestSelectPrograms(t *testing.T) {
	all, err := SelectPrograms("")
	if err != nil || len(all) != 2 {
		t.Fatalf("SelectPrograms(\"\") = %v, %v", all, err)
	}
	one, err := SelectPrograms("aws-efs-csi-driver-operator")
	if err != nil || len(one) != 1 || one[0].Module != "operator" {
		t.Fatalf("SelectPrograms(operator) = %v, %v", one, err)
	}
	if _, err := SelectPrograms("aws-efs-csi-driver,nope"); err == nil || !strings.Contains(err.Error(), `unknown program "nope": want a comma-separated list of aws-efs-csi-driver, aws-efs-csi-driver-operator`) {
		t.Fatalf("SelectPrograms(nope) = %v", err)
	}
}
