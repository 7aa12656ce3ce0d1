package main

import (
	"errors"
	"strings"
	"testing"
)

// plan on this repository lists every suite `go tool mage test` runs, this module's own among them, and runs none.
func TestPlanListsEverySuiteOfTheRepository(t *testing.T) {
	var out strings.Builder
	if err := run(t.Context(), []string{"plan"}, func(string) string { return "-run TestX" }, &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"go driver\n", "go magefiles\n", "go operator\n", "go testharness\n", "pytest efs-utils\n",
		"in testharness: go test -race -timeout 30m -run TestX ./...\n",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("plan does not list %q:\n%s", want, out.String())
		}
	}
}

func TestUnknownCommandsAreUsageErrors(t *testing.T) {
	for _, args := range [][]string{nil, {"cluster"}, {"cluster", "sideways"}, {"test", "extra"}} {
		err := run(t.Context(), args, func(string) string { return "" }, &strings.Builder{})
		if !errors.Is(err, errUsage) || !strings.Contains(err.Error(), "unknown command") {
			t.Errorf("run(%q) = %v; want the usage", args, err)
		}
	}
}
