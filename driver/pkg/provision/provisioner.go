package provision

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"

	"k8s.io/klog/v2"

	"github.com/openshift/aws-efs-csi/driver/pkg/cloud"
	"github.com/openshift/aws-efs-csi/driver/pkg/gidalloc"
	"github.com/openshift/aws-efs-csi/driver/pkg/scparams"
	"github.com/openshift/aws-efs-csi/driver/pkg/volume"
)

// ErrConflict is wrapped when an access point with the request's client token exists but does not fit the request.
var ErrConflict = errors.New("existing access point does not match the request")

// Tags the driver puts on access points created with enableTagging.
const (
	// ClusterTagKey is on every tagged access point (the upstream IAM policy example conditions on it).
	ClusterTagKey = "efs.csi.aws.com/cluster"
	// CapacityTagKey records the requested capacity, so that a CreateVolume repeated with another capacity is
	// refused as CSI requires.
	CapacityTagKey = "efs.csi.aws.com/requested-bytes"
)

// EFS lists the EFS calls the provisioner makes.
type EFS interface {
	gidalloc.Lister
	ListAccessPoints(ctx context.Context, fileSystemID string) ([]cloud.AccessPoint, error)
	CreateAccessPoint(ctx context.Context, in cloud.CreateAccessPointInput) (*cloud.AccessPoint, error)
	DescribeAccessPoint(ctx context.Context, id string) (*cloud.AccessPoint, error)
	DeleteAccessPoint(ctx context.Context, id string) error
	DescribeFileSystem(ctx context.Context, id string) (*cloud.FileSystem, error)
	DescribeMountTargets(ctx context.Context, fileSystemID string) ([]cloud.MountTarget, error)
}

// Zones lists the availability zones of the cluster's own account (names there and IDs).
type Zones interface {
	AvailabilityZones(ctx context.Context) ([]cloud.Zone, error)
}

// Account says whose file system a request is for.
type Account struct {
	// Key identifies the identity ("" for the driver's own; the role ARN for a cross-account one).
	Key string
	// CrossAccount is true when the file system belongs to another account (awsRoleArn in the secret).
	CrossAccount bool
	// DNSByAZID asks the node to resolve the mount target by AZ-ID DNS name (secret crossaccount=true).
	DNSByAZID bool
}

// CreateRequest is one CreateVolume, parameters parsed and the file system ID resolved.
type CreateRequest struct {
	Name         string
	FileSystemID string
	Params       scparams.Params
	Account      Account
	// CapacityBytes is the requested capacity (EFS ignores it; recorded in a tag when tagging).
	CapacityBytes int64
}

// Volume is a provisioned volume.
type Volume struct {
	Handle  volume.Handle
	Context volume.Context
	// Zone is the availability zone name (in the cluster's account) the volume is reachable from only, for a
	// One Zone file system with enforceZoneAffinity; "" otherwise.
	Zone        string
	AccessPoint cloud.AccessPoint
}

// Config configures a Provisioner.
type Config struct {
	// Tags are added to every access point created with enableTagging (--tags).
	Tags map[string]string
	// GIDs allocates GIDs; required.
	GIDs *gidalloc.Allocator
}

// ErrExhausted is wrapped when a file system has no room for another volume: no free GID in the StorageClass's
// range (from package gidalloc), or the file system's access point quota is reached.
var ErrExhausted = gidalloc.ErrExhausted

// AccountOf is the Account a request's provisioner/deleter secrets select.
func AccountOf(ca scparams.CrossAccount) Account {
	return Account{Key: ca.RoleARN, CrossAccount: ca.RoleARN != "", DNSByAZID: ca.RoleARN != "" && ca.DNSByAZID}
}

// ErrBusy is wrapped when another CreateVolume or DeleteVolume holds the access point (Aborted: the caller
// retries).
var ErrBusy = errors.New("another operation on this access point is in progress")

// Provisioner creates and deletes the access points behind volumes.
type Provisioner struct {
	cfg   Config
	locks apLocks
	mu    sync.Mutex
	fs    map[string]cloud.FileSystem // One Zone placement never changes: cached per account+FS
	zones []cloud.Zone                // the cluster account's zones, cached
}

// New returns a Provisioner.
func New(cfg Config) *Provisioner {
	return &Provisioner{cfg: cfg, fs: map[string]cloud.FileSystem{}}
}

// Create creates (or, for a retried or reused request, finds) the access point of a volume. Every lookup that can
// fail runs before CreateAccessPoint, so a failed Create leaves no access point behind.
func (p *Provisioner) Create(ctx context.Context, c EFS, own Zones, req CreateRequest) (*Volume, error) {
	params := req.Params
	if !params.EnableTagging && len(p.cfg.Tags) > 0 {
		return nil, fmt.Errorf("%w: %s=false conflicts with the driver's --tags: remove one of them", scparams.ErrInvalidParameter, scparams.ParamEnableTagging)
	}
	if params.DirectoryPerms == "" && !params.ReuseAccessPoint {
		return nil, scparams.PermsMissing()
	}
	rootDir, err := scparams.RootDir(params, req.Name)
	if err != nil {
		return nil, err
	}
	v := &Volume{}
	if params.EnforceZoneAffinity {
		if v.Zone, err = p.oneZone(ctx, c, own, req); err != nil {
			return nil, err
		}
	}
	if v.Context, err = p.mountContext(ctx, c, own, req); err != nil {
		return nil, err
	}
	in := cloud.CreateAccessPointInput{FileSystemID: req.FileSystemID, ClientToken: scparams.ClientToken(params, req.FileSystemID, req.Name),
		RootDir: rootDir, Permissions: params.DirectoryPerms}
	if params.EnableTagging {
		in.Tags = maps.Clone(p.cfg.Tags)
		if in.Tags == nil {
			in.Tags = map[string]string{}
		}
		in.Tags[ClusterTagKey] = "true"
		if !params.ReuseAccessPoint {
			in.Tags[CapacityTagKey] = strconv.FormatInt(req.CapacityBytes, 10)
		}
	}
	want := expected{permissions: params.DirectoryPerms, reuse: params.ReuseAccessPoint}
	if !params.ReuseAccessPoint {
		// The token is the volume name: an access point holding it is this very volume, from an earlier attempt
		// (possibly by the previous version of this driver, which suffixed the default directory).
		want.rootDirs, want.tags = []string{rootDir}, in.Tags
		if legacy, err := scparams.LegacyRootDir(params, req.Name); err == nil && legacy != rootDir {
			want.rootDirs = append(want.rootDirs, legacy)
		}
		// Or by the upstream driver, for this very request, before a switch of drivers: its unique directory ends
		// in a random UUID.
		want.upstreamPrefix, _ = scparams.UpstreamUniqueDirPrefix(params)
	}
	var ap *cloud.AccessPoint
	if params.ReuseAccessPoint {
		if ap, err = p.findReusable(ctx, c, req, in.ClientToken); err != nil {
			return nil, err
		}
	}
	if ap != nil {
		if err := fits(ap, req, want); err != nil {
			return nil, err
		}
		p.cfg.GIDs.Record(gidKey(req), ap)
		klog.V(2).InfoS("Reusing access point", "accessPointID", ap.ID, "fileSystemID", ap.FileSystemID, "clientToken", ap.ClientToken)
	} else {
		if params.DirectoryPerms == "" {
			return nil, scparams.PermsMissing()
		}
		if ap, err = p.createAccessPoint(ctx, c, req, in, want); err != nil {
			return nil, err
		}
	}
	// A DeleteVolume of this access point (a reused one, or a retried create racing its own delete) must not run
	// while this create hands it out.
	unlock, err := p.locks.tryLock(ap.ID)
	if err != nil {
		return nil, err
	}
	defer unlock()
	v.AccessPoint = *ap
	v.Handle = volume.Handle{FileSystemID: req.FileSystemID, AccessPointID: ap.ID}
	return v, nil
}

// apLocks holds one lock per access point ID, taken by Create once the ID is known and by Delete throughout
// (upstream's per-access-point lock_manager). A busy lock is not waited for: the caller gets ErrBusy and retries.
type apLocks struct {
	mu   sync.Mutex
	held map[string]bool
}

func (l *apLocks) tryLock(id string) (func(), error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.held[id] {
		return nil, fmt.Errorf("%w: access point %s", ErrBusy, id)
	}
	if l.held == nil {
		l.held = map[string]bool{}
	}
	l.held[id] = true
	return func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		delete(l.held, id)
	}, nil
}

// findReusable looks for the access point of a reuseAccessPoint claim before creating one: by this driver's token
// (namespaced, or upstream's when reuseAccessPointTokenFormat=upstream) and by the upstream driver's token,
// sha256(PVC name), so that access points the upstream driver (or an earlier version of this one) made are reused,
// as upstream's FindAccessPointByClientToken does. nil when there is none.
func (p *Provisioner) findReusable(ctx context.Context, c EFS, req CreateRequest, token string) (*cloud.AccessPoint, error) {
	upstream := scparams.UpstreamToken(req.Params.PVCName)
	aps, err := c.ListAccessPoints(ctx, req.FileSystemID)
	if err != nil {
		return nil, fmt.Errorf("find the access point of reused claim %s/%s: %w", req.Params.PVCNamespace, req.Params.PVCName, err)
	}
	var found *cloud.AccessPoint
	for i := range aps {
		switch aps[i].ClientToken {
		case token:
			return &aps[i], nil
		case upstream:
			found = &aps[i]
		}
	}
	return found, nil
}

// createAccessPoint allocates the POSIX identity and creates the access point, adopting an existing one with the
// same client token when it fits the request.
func (p *Provisioner) createAccessPoint(ctx context.Context, c EFS, req CreateRequest, in cloud.CreateAccessPointInput, want expected) (*cloud.AccessPoint, error) {
	params := req.Params
	var lease *gidalloc.Lease
	if params.UID == nil || params.GID == nil {
		var err error
		lease, err = p.cfg.GIDs.Allocate(ctx, gidKey(req), c, req.FileSystemID, params.GIDRangeStart, params.GIDRangeEnd)
		if errors.Is(err, ErrExhausted) {
			// A retry whose first attempt created the access point (reply lost) finds the range full of its own
			// making: adopt that access point rather than fail.
			ap, aerr := p.adopt(ctx, c, req, in.ClientToken, "", want)
			switch {
			case aerr == nil:
				return ap, nil
			case errors.Is(aerr, ErrConflict):
				return nil, aerr
			}
		}
		if err != nil {
			return nil, err
		}
	}
	in.UID, in.GID = identity(params, lease)
	ap, err := c.CreateAccessPoint(ctx, in)
	var exists *cloud.AlreadyExistsError
	switch {
	case err == nil:
		if lease != nil {
			if ap.GID == lease.GID {
				lease.Commit()
			} else {
				lease.Release() // EFS returned an earlier access point with this token
				p.cfg.GIDs.Record(gidKey(req), ap)
			}
		}
		if err := fits(ap, req, want); err != nil {
			return nil, err
		}
		klog.V(2).InfoS("Created access point", "accessPointID", ap.ID, "fileSystemID", ap.FileSystemID, "rootDir", ap.RootDir, "gid", ap.GID)
		return ap, nil
	case errors.As(err, &exists):
		if lease != nil {
			lease.Release()
		}
		return p.adopt(ctx, c, req, in.ClientToken, exists.AccessPointID, want)
	default:
		if lease != nil {
			if lostReply(err) {
				// EFS may have created the access point and the reply was lost: keep the GID out of use and look
				// at the file system again before the next allocation.
				lease.Lost()
			} else {
				lease.Release()
			}
		}
		if errors.Is(err, cloud.ErrLimitExceeded) {
			p.cfg.GIDs.Invalidate(gidKey(req))
			return nil, fmt.Errorf("%w: file system %s has reached its access point quota: delete unused volumes, raise the EFS quota, or set the StorageClass parameter %s to another file system: %w",
				ErrExhausted, req.FileSystemID, scparams.ParamFileSystemID, err)
		}
		return nil, err
	}
}

// lostReply reports whether a failed CreateAccessPoint may still have created the access point: a timeout, a
// cancelled call or a 5xx after the request left. Throttling and 4xx answers mean EFS did nothing.
func lostReply(err error) bool {
	return errors.Is(err, cloud.ErrUnavailable) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled)
}

// adopt returns the access point that already holds the request's client token (a retried CreateVolume, or a
// reused access point) if it fits the request, and records its GID in the allocator's view.
func (p *Provisioner) adopt(ctx context.Context, c EFS, req CreateRequest, token, id string, want expected) (*cloud.AccessPoint, error) {
	var ap *cloud.AccessPoint
	if id != "" {
		found, err := c.DescribeAccessPoint(ctx, id)
		if err != nil {
			return nil, fmt.Errorf("describe access point %s holding client token %q: %w", id, token, err)
		}
		ap = found
	} else {
		aps, err := c.ListAccessPoints(ctx, req.FileSystemID)
		if err != nil {
			return nil, fmt.Errorf("find access point with client token %q: %w", token, err)
		}
		for i := range aps {
			if aps[i].ClientToken == token {
				ap = &aps[i]
			}
		}
		if ap == nil {
			return nil, fmt.Errorf("EFS reported client token %q in use on %s but no access point carries it: %w", token, req.FileSystemID, cloud.ErrUnavailable)
		}
	}
	p.cfg.GIDs.Record(gidKey(req), ap)
	if err := fits(ap, req, want); err != nil {
		return nil, err
	}
	klog.V(2).InfoS("Using existing access point with the same client token", "accessPointID", ap.ID, "fileSystemID", ap.FileSystemID)
	return ap, nil
}

// expected is what an access point found by client token must look like, beyond what fits reads from the request.
type expected struct {
	// rootDirs are the acceptable root directories; nil checks only that the root is under basePath (reuse:
	// another cluster's volume name gave the directory its name).
	rootDirs []string
	// tags must all be on the access point with these values (nil: not checked).
	tags map[string]string
	// permissions is directoryPerms ("" when the StorageClass has none: a reused access point keeps its own).
	permissions string
	// reuse is a reuseAccessPoint claim: the access point found is another volume's, shared on purpose, and gets
	// the checks upstream's reuse makes and no more (its directory's owner and permissions are its own).
	reuse bool
	// upstreamPrefix, when not "", is how the upstream driver's unique root directory for this request starts
	// (scparams.UpstreamUniqueDirPrefix): an access point holding the volume's token there was made by upstream for
	// this very request, before a switch of drivers.
	upstreamPrefix string
}

// madeByUpstream reports whether ap's root is the upstream driver's unique directory for the request, rather than
// one of the directories this driver would choose.
func (w expected) madeByUpstream(ap *cloud.AccessPoint) bool {
	return w.upstreamPrefix != "" && !slices.Contains(w.rootDirs, ap.RootDir) && scparams.IsUpstreamUniqueDir(ap.RootDir, w.upstreamPrefix)
}

// fits checks that an access point found by client token can serve the request; the error names the property that
// differs, what the access point has and what the request asks (CSI: AlreadyExists). A reused access point, and
// one the upstream driver made for this very request (expected.madeByUpstream), get the checks upstream makes and
// no more: their directory, owner, permissions and tags are not this request's choices.
func fits(ap *cloud.AccessPoint, req CreateRequest, want expected) error {
	differs := func(field string, has, asks any) error {
		return fmt.Errorf("%w: access point %s holding this volume's client token differs in %s: it has %v, the request asks %v",
			ErrConflict, ap.ID, field, has, asks)
	}
	if err := fitsAsUpstream(ap, req, differs); err != nil {
		return err
	}
	if want.reuse {
		return nil
	}
	if want.madeByUpstream(ap) {
		klog.V(2).InfoS("Access point holding this volume's client token was made by the upstream driver for this request; adopting it",
			"accessPointID", ap.ID, "fileSystemID", ap.FileSystemID, "rootDir", ap.RootDir)
		return nil
	}
	p := req.Params
	switch {
	case want.rootDirs != nil && !slices.Contains(want.rootDirs, ap.RootDir):
		return differs("root directory", ap.RootDir, want.rootDirs[0])
	case ap.HasCreationInfo && (ap.OwnerUID != ap.UID || ap.OwnerGID != ap.GID):
		return differs("directory owner", fmt.Sprintf("%d:%d", ap.OwnerUID, ap.OwnerGID), fmt.Sprintf("%d:%d", ap.UID, ap.GID))
	case ap.HasCreationInfo && want.permissions != "" && !samePerms(ap.Permissions, want.permissions):
		return differs(scparams.ParamDirectoryPerms, ap.Permissions, want.permissions)
	case !p.ReuseAccessPoint && ap.Tags[CapacityTagKey] != "" && ap.Tags[CapacityTagKey] != strconv.FormatInt(req.CapacityBytes, 10):
		return differs("capacity (tag "+CapacityTagKey+")", ap.Tags[CapacityTagKey]+" bytes", strconv.FormatInt(req.CapacityBytes, 10)+" bytes")
	}
	for _, k := range slices.Sorted(maps.Keys(want.tags)) {
		if k == CapacityTagKey {
			continue
		}
		if got, ok := ap.Tags[k]; !ok || got != want.tags[k] {
			return differs("tag "+k, fmt.Sprintf("%q", got), fmt.Sprintf("%q", want.tags[k]))
		}
	}
	return nil
}

// fitsAsUpstream makes the checks of upstream's validateExistingAccessPoint (kubernetes-sigs/aws-efs-csi-driver
// v3.4.1 pkg/driver/controller.go), plus the file system: the root under basePath (never "/"), a POSIX user, and
// uid and gid as fixed or, when allocated, inside the GID range.
func fitsAsUpstream(ap *cloud.AccessPoint, req CreateRequest, differs func(field string, has, asks any) error) error {
	p := req.Params
	base := p.BasePath
	if base == "" {
		base = "/"
	}
	switch {
	case ap.FileSystemID != req.FileSystemID:
		return differs(scparams.ParamFileSystemID, ap.FileSystemID, req.FileSystemID)
	case ap.RootDir == "/" || !(base == "/" || strings.HasPrefix(ap.RootDir, base+"/")):
		return differs("root directory ("+scparams.ParamBasePath+")", ap.RootDir, "a directory under "+base)
	case !ap.HasPosixUser:
		return differs("POSIX user", "none", "uid and gid")
	case p.UID != nil && ap.UID != *p.UID:
		return differs("POSIX user "+scparams.ParamUID, ap.UID, *p.UID)
	case p.GID != nil && ap.GID != *p.GID:
		return differs("POSIX user "+scparams.ParamGID, ap.GID, *p.GID)
	case p.GID == nil && (ap.GID < p.GIDRangeStart || ap.GID > p.GIDRangeEnd):
		return differs("POSIX user gid ("+scparams.ParamGIDRangeStart+"/"+scparams.ParamGIDRangeEnd+")", ap.GID, fmt.Sprintf("a GID in [%d, %d]", p.GIDRangeStart, p.GIDRangeEnd))
	case p.UID == nil && (ap.UID < p.GIDRangeStart || ap.UID > p.GIDRangeEnd):
		return differs("POSIX user uid ("+scparams.ParamGIDRangeStart+"/"+scparams.ParamGIDRangeEnd+")", ap.UID, fmt.Sprintf("a UID in [%d, %d]", p.GIDRangeStart, p.GIDRangeEnd))
	}
	return nil
}

// samePerms compares two octal modes by value ("0755" and "755" are the same).
func samePerms(a, b string) bool {
	x, errA := strconv.ParseUint(a, 8, 32)
	y, errB := strconv.ParseUint(b, 8, 32)
	return errA == nil && errB == nil && x == y
}

// identity is upstream's rule: fixed uid/gid win; an unset one takes the allocated GID.
func identity(p scparams.Params, lease *gidalloc.Lease) (uid, gid uint32) {
	if p.UID != nil {
		uid = *p.UID
	} else {
		uid = lease.GID
	}
	if p.GID != nil {
		gid = *p.GID
	} else {
		gid = lease.GID
	}
	return uid, gid
}

func gidKey(req CreateRequest) string { return req.Account.Key + "|" + req.FileSystemID }
