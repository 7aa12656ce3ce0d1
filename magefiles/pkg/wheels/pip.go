package wheels

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// Pip runs `python -m pip` with one interpreter.
type Pip struct {
	// Python is an interpreter with pip (and setuptools and wheel for building sdists); empty means FindPython.
	Python string
	// SourceDateEpoch, when set, is given to build backends as SOURCE_DATE_EPOCH (the dates inside built wheels).
	SourceDateEpoch int64
}

// FindPython returns the interpreter that runs pip: $WHEELS_PYTHON when set, else the system python3
// (/usr/bin/python3, where Debian's python3-pip, python3-setuptools and python3-wheel install), else python3 on
// PATH.
func FindPython(getenv func(string) string) string {
	if p := getenv("WHEELS_PYTHON"); p != "" {
		return p
	}
	if _, err := os.Stat("/usr/bin/python3"); err == nil {
		return "/usr/bin/python3"
	}
	return "python3"
}

func (p Pip) python() string {
	if p.Python != "" {
		return p.Python
	}
	return FindPython(os.Getenv)
}

// passedEnv are the variables pip may need from the caller's environment: the network's proxies and CA bundle.
var passedEnv = []string{"PATH", "http_proxy", "https_proxy", "no_proxy", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "SSL_CERT_FILE", "REQUESTS_CA_BUNDLE"}

// Run runs pip with args and returns its combined output. The environment is clean, so that no user or site
// configuration (pip.conf, PIP_* variables, the user site) and no cache takes part: the files pip uses are the ones
// named on the command line. pip runs in a temporary directory that is also its HOME. An error carries pip's
// output.
func (p Pip) Run(ctx context.Context, args ...string) (string, error) {
	python := p.python()
	dir, err := os.MkdirTemp("", "pip-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	argv := append([]string{"-m", "pip"}, args...)
	argv = append(argv, "--no-cache-dir", "--disable-pip-version-check", "--no-color", "--no-input")
	cmd := exec.CommandContext(ctx, python, argv...)
	cmd.Dir = dir
	cmd.Env = []string{"HOME=" + dir, "LC_ALL=C.UTF-8", "PYTHONHASHSEED=0", "PYTHONDONTWRITEBYTECODE=1",
		"PYTHONNOUSERSITE=1", "PIP_CONFIG_FILE=/dev/null", "PIP_ROOT_USER_ACTION=ignore"}
	for _, k := range passedEnv {
		if v, ok := os.LookupEnv(k); ok {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
	}
	if p.SourceDateEpoch != 0 {
		cmd.Env = append(cmd.Env, fmt.Sprintf("SOURCE_DATE_EPOCH=%d", p.SourceDateEpoch))
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("%s -m pip %s: %w\n%s", python, strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return string(out), nil
}

// Check fails naming the Debian and RHEL packages when the interpreter lacks one of modules.
func (p Pip) Check(ctx context.Context, modules ...string) error {
	python := p.python()
	if err := exec.CommandContext(ctx, python, "-c", "import "+strings.Join(modules, ", ")).Run(); err != nil {
		var pkgs []string
		for _, m := range modules {
			pkgs = append(pkgs, "python3-"+m)
		}
		return fmt.Errorf("%s lacks one of the Python modules %s (%v): install %s (Debian and RHEL), or set WHEELS_PYTHON to an interpreter that has them",
			python, strings.Join(modules, ", "), err, strings.Join(pkgs, " "))
	}
	return nil
}
