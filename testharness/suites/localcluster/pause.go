package localcluster

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// PauseImage is the sandbox image of every pod, built here from ./pause; tests may run it as a container too.
const PauseImage = "localhost/aws-efs-csi-e2e/pause:v1"

// harnessPackage is the import path of this package; the programs it packs as images live below it.
const harnessPackage = "github.com/openshift/aws-efs-csi/testharness/suites/localcluster"

// buildPauseImage compiles the pause program and writes its image as a docker archive to dir/pause.tar.
func buildPauseImage(ctx context.Context, dir string, log io.Writer) (string, error) {
	return buildProgramImage(ctx, dir, harnessPackage+"/pause", "pause", "/pause", PauseImage, log)
}

// buildProgramImage compiles a program of this repository (static) and writes an image holding only it, as its
// entrypoint at path, to dir/<name>.tar, tagged ref.
func buildProgramImage(ctx context.Context, dir, pkg, name, path, ref string, log io.Writer) (string, error) {
	bin, err := buildProgram(ctx, dir, pkg, name, log)
	if err != nil {
		return "", err
	}
	return writeImage(bin, path, ref, filepath.Join(dir, name+".tar"))
}

// buildProgram compiles a program of this repository, static, to dir/name.
func buildProgram(ctx context.Context, dir, pkg, name string, log io.Writer) (string, error) {
	bin := filepath.Join(dir, name)
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags=-s -w", "-o", bin, pkg)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go build %s: %w", pkg, err)
	}
	return bin, nil
}

// writeImage writes a one-binary image of bin (at path, its entrypoint) tagged ref as a docker archive to out.
func writeImage(bin, path, ref, out string) (string, error) {
	img, err := singleBinaryImage(bin, path)
	if err != nil {
		return "", err
	}
	tag, err := name.NewTag(ref)
	if err != nil {
		return "", err
	}
	if err := tarball.WriteToFile(out, tag, img); err != nil {
		return "", fmt.Errorf("writing %s: %w", out, err)
	}
	return out, nil
}

// singleBinaryImage is an image for this machine's platform holding one file, the executable at path, as its
// entrypoint.
func singleBinaryImage(file, path string) (v1.Image, error) {
	return FilesImage([]ImageFile{{Path: path, Source: file}}, ImageConfig{Entrypoint: []string{path}})
}
