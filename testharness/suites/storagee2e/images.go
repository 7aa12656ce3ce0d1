package storagee2e

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/openshift/aws-efs-csi/testharness/suites/localcluster"
)

// StandInRegistry replaces the registry of Kubernetes' e2e test images (promoterE2eRegistry,
// registry.k8s.io/e2e-test-images) through KUBE_TEST_REPO_LIST: the images the tests name are then found under it
// in the cluster's containerd, where WriteStandInImages' archive puts them, and nothing is pulled.
const StandInRegistry = "localhost/aws-efs-csi-e2e/k8s-e2e-test-images"

// repoList is the KUBE_TEST_REPO_LIST file that points the e2e test images at StandInRegistry.
const repoList = "promoterE2eRegistry: " + StandInRegistry + "\n"

// standInImages are the e2e test images the storage tests' pods run (by name, as e2e.test --list-images prints
// them): busybox for nearly every pod; nginx (the exec test) and glibc-dns-testing (the read-only multi-pod test),
// in which the tests only run shell commands; agnhost, whose mounttest the subPath tests run.
var standInImages = []string{"busybox", "nginx", "glibc-dns-testing", agnhostImage}

// agnhostImage is the e2e test image that holds the agnhost program (its entrypoint) besides the shell utilities.
const agnhostImage = "agnhost"

// ImagesToStandIn lists the references of the images the storage tests run, as e2e.test names them with the
// stand-in registry (its --list-images).
func ImagesToStandIn(ctx context.Context, e2eTest, dir string) ([]string, error) {
	listFile, err := writeRepoList(dir)
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, e2eTest, "--list-images")
	cmd.Env = append(os.Environ(), "KUBE_TEST_REPO_LIST="+listFile)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%s --list-images: %w\n%s", e2eTest, err, stderr.String())
	}
	return selectImages(string(out))
}

// selectImages picks from e2e.test --list-images' output the stand-in registry's images named in standInImages.
func selectImages(listing string) ([]string, error) {
	var refs []string
	found := map[string]bool{}
	sc := bufio.NewScanner(strings.NewReader(listing))
	for sc.Scan() {
		ref := strings.TrimSpace(sc.Text())
		repo, _, ok := strings.Cut(ref, ":")
		if !ok || !strings.HasPrefix(repo, StandInRegistry+"/") {
			continue
		}
		for _, n := range standInImages {
			if path.Base(repo) == n {
				refs = append(refs, ref)
				found[n] = true
			}
		}
	}
	for _, n := range standInImages {
		if !found[n] {
			return nil, fmt.Errorf("e2e.test --list-images names no %s image under %s:\n%s", n, StandInRegistry, listing)
		}
	}
	return refs, nil
}

// WriteStandInImages writes, as one docker archive at out, the images that stand in for the e2e test images refs
// here: Debian's static busybox (the file at busybox) with a link for each of its applets where
// `busybox --list-full` puts it, which is what the upstream busybox test image holds; for agnhost the same plus
// the agnhost program (built from k8s.io/kubernetes at the cluster's version) as /agnhost, its entrypoint, as in
// the upstream image.
func WriteStandInImages(ctx context.Context, busybox, agnhost string, refs []string, out string) error {
	list, err := exec.CommandContext(ctx, busybox, "--list-full").Output()
	if err != nil {
		return fmt.Errorf("%s --list-full: %w", busybox, err)
	}
	files := []localcluster.ImageFile{{Path: "/bin/busybox", Source: busybox}}
	for _, applet := range strings.Fields(string(list)) {
		if p := "/" + applet; p != "/bin/busybox" {
			files = append(files, localcluster.ImageFile{Path: p, Link: "/bin/busybox"})
		}
	}
	shell, err := localcluster.FilesImage(files, localcluster.ImageConfig{})
	if err != nil {
		return err
	}
	withAgnhost, err := localcluster.FilesImage(append(files, localcluster.ImageFile{Path: "/agnhost", Source: agnhost}),
		localcluster.ImageConfig{Entrypoint: []string{"/agnhost"}})
	if err != nil {
		return err
	}
	tags := map[name.Reference]v1.Image{}
	for _, r := range refs {
		tag, err := name.NewTag(r)
		if err != nil {
			return err
		}
		tags[tag] = shell
		if path.Base(tag.RepositoryStr()) == agnhostImage {
			tags[tag] = withAgnhost
		}
	}
	return tarball.MultiRefWriteToFile(out, tags)
}

// writeRepoList writes the KUBE_TEST_REPO_LIST file into dir and returns its path.
func writeRepoList(dir string) (string, error) {
	p := filepath.Join(dir, "repo-list.yaml")
	return p, os.WriteFile(p, []byte(repoList), 0o644)
}
