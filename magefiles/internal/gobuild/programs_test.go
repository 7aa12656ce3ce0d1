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
		got = append(got, p.Module+":"+p.Package()+":"+p.VersionPackage())
	}
	want := []string{
		"driver:./cmd/aws-efs-csi-driver:github.com/openshift/aws-efs-csi/driver/pkg/version",
		"operator:./cmd/aws-efs-csi-driver-operator:github.com/openshift/aws-efs-csi/operator/pkg/version",
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("Programs = %v, want %v", got, want)
	}
}
