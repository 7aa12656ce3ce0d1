package imagebuild

import (
	"path"

	"github.com/openshift/aws-efs-csi/magefiles/pkg/layer"
	"github.com/openshift/aws-efs-csi/magefiles/pkg/versions"
)

// LayerKind says where a layer's files come from.
type LayerKind int

// The layer kinds an image can stack on its base.
const (
	// EFSUtils installs efs-utils per efs-utils/layout.json (platform-independent).
	EFSUtils LayerKind = iota
	// Wheels installs Options.Wheels into the base Python's site-packages (platform-independent).
	Wheels
	// Binary installs the platform's build of a program at Dest with mode 0755.
	Binary
	// StaticFiles moves efs-utils' /etc/amazon/efs to Dest, as the driver's Containerfile does with mv.
	StaticFiles
	// Files adds the entries of LayerSpec.Files as given (platform-independent), e.g. the OLM bundle's manifests
	// or a file-based catalog.
	Files
)

// LayerSpec is one layer of an image.
type LayerSpec struct {
	// Name appears in progress lines and in the image history.
	Name string
	Kind LayerKind
	// Program is the binary name (Binary layers).
	Program string
	// Dest is the in-image path of the binary (Binary) or the directory receiving the static files (StaticFiles).
	Dest string
	// Files are the entries of a Files layer.
	Files []layer.Entry
}

// Config is what an image's config says beyond its base.
type Config struct {
	DisplayName string
	Description string
	// Tags is the comma-separated io.openshift.tags value.
	Tags       string
	Entrypoint []string
	// Cmd replaces the base's command when not nil (after Entrypoint, which clears it).
	Cmd []string
	// Labels are added after the standard labels and override them.
	Labels map[string]string
	// User replaces the base's user when not empty.
	User string
	// Env entries replace base entries with the same name.
	Env []string
	// CPE is the cpe label (images built on RHEL for an OpenShift release); empty means none.
	CPE string
}

// Spec describes one image.
type Spec struct {
	// Name is the repository name, the layout directory under _output/images and the key of digests.json.
	Name string
	// From is the base: a registry reference, "oci:<layout dir>[:<ref name>]", "tarball:<file>" (docker save or
	// crane pull), "rootfs:<os/arch>=<file>[,...]" (a file-system tarball such as mmdebstrap's, one per
	// platform), "scratch", or "image:<name>" for an image assembled earlier in the same run. Empty means the
	// base must be given in FromEnv.
	From string
	// FromEnv is the environment variable that overrides From; errors about the base name it.
	FromEnv string
	// FromStage names the stage of the image's Containerfile that From stands for when mage cannot build that
	// stage itself (it runs dnf); the Containerfile's final stage must be FROM it.
	FromStage string
	// Module is the Go module whose version the image carries (driver or operator).
	Module string
	// CheckEFSUtilsRuntime makes the build fail unless the base has python3 >= 3.9, stunnel and mount.nfs4.
	CheckEFSUtilsRuntime bool
	Layers               []LayerSpec
	Config               Config
}

// Image names.
const (
	EFSUtilsBase = "aws-efs-utils-base"
	Driver       = "aws-efs-csi-driver"
	Operator     = "aws-efs-csi-driver-operator"
)

// StaticFilesDir is where the driver image keeps the efs-utils files the driver copies into its config directory.
const StaticFilesDir = "/usr/share/aws-efs-csi-driver/efs-static-files"

// EFSUtilsRuntimeStage is the stage of images/aws-efs-utils-base/Containerfile that installs the RPMs efs-utils
// needs (python3, stunnel, nfs-utils); mage cannot run dnf, so it assembles the efs-utils base on an image of that
// stage, given by AWS_EFS_UTILS_BASE_FROM.
const EFSUtilsRuntimeStage = "runtime"

// Vendor, Maintainer are the vendor and maintainer labels of every image.
const (
	Vendor     = "Red Hat, Inc."
	Maintainer = "OpenShift Storage <aos-storage-staff@redhat.com>"
)

// DefaultSpecs lists the images `mage images` assembles, in dependency order, with the bases and CPE of the
// versions file: the efs-utils base has no default (an image of its Containerfile's runtime stage must be given),
// the driver is built on the efs-utils base of the same run, as Konflux builds it on the aws-efs-utils-base
// component, and the operator on BASE_IMAGE.
func DefaultSpecs(v versions.Versions) []Spec {
	driverBin := path.Join("/usr/bin", Driver)
	cpe := v.Get("CPE")
	return []Spec{
		{
			Name: EFSUtilsBase, From: "", FromEnv: "AWS_EFS_UTILS_BASE_FROM", FromStage: EFSUtilsRuntimeStage, Module: "driver",
			CheckEFSUtilsRuntime: true,
			Layers:               []LayerSpec{{Name: "efs-utils", Kind: EFSUtils}, {Name: "botocore", Kind: Wheels}},
			Config: Config{
				DisplayName: "AWS EFS utils base",
				Description: "RHEL 9 with the Amazon EFS mount helper (mount.efs, amazon-efs-mount-watchdog), stunnel, nfs-utils and botocore: the base of the AWS EFS CSI driver image.",
				Tags:        "aws,efs,efs-utils,nfs,storage",
				CPE:         cpe,
			},
		},
		{
			Name: Driver, From: "image:" + EFSUtilsBase, FromEnv: "AWS_EFS_CSI_DRIVER_FROM", Module: "driver",
			Layers: []LayerSpec{
				{Name: "efs static files", Kind: StaticFiles, Dest: StaticFilesDir},
				{Name: Driver, Kind: Binary, Program: Driver, Dest: driverBin},
			},
			Config: Config{
				DisplayName: "AWS EFS CSI Driver",
				Description: "The Container Storage Interface driver for Amazon Elastic File System, with efs-utils and botocore.",
				Tags:        "aws,efs,csi,storage,openshift",
				Entrypoint:  []string{driverBin, "--efs-utils-static-files-path=" + StaticFilesDir},
				User:        "0",
				CPE:         cpe,
			},
		},
		{
			Name: Operator, From: v.Get("BASE_IMAGE"), FromEnv: "AWS_EFS_CSI_DRIVER_OPERATOR_FROM", Module: "operator",
			Layers: []LayerSpec{{Name: Operator, Kind: Binary, Program: Operator, Dest: path.Join("/usr/bin", Operator)}},
			Config: Config{
				DisplayName: "AWS EFS CSI Driver Operator",
				Description: "The OLM operator that installs and runs the AWS EFS CSI driver on OpenShift.",
				Tags:        "aws,efs,csi,storage,operator,openshift",
				Entrypoint:  []string{path.Join("/usr/bin", Operator)},
				User:        "1001",
				CPE:         cpe,
			},
		},
	}
}
