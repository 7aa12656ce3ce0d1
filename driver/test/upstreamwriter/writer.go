package upstreamwriter

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/efs"
	"github.com/aws/aws-sdk-go-v2/service/efs/types"
)

// Upstream's constants (controller.go): the default GID range and the cap on its width, and the cluster tag.
const (
	defaultGIDMin   = 50000
	perFSLimit      = 10000
	clusterTagKey   = "efs.csi.aws.com/cluster"
	clusterTagValue = "true"
)

// Writer issues the EFS calls of upstream's CreateVolume.
type Writer struct {
	efs *efs.Client
	// Tags are upstream's --tags, added to the cluster tag.
	Tags map[string]string
}

// New returns a Writer talking to the EFS endpoint at url (a fakeaws server) with static credentials.
func New(url string) *Writer {
	cfg := aws.Config{Region: "us-east-1", BaseEndpoint: aws.String(url),
		Credentials: credentials.NewStaticCredentialsProvider("AKIAUPSTREAMWRITER01", "secret", "")}
	return &Writer{efs: efs.NewFromConfig(cfg)}
}

// Result is the access point upstream's CreateVolume ended with.
type Result struct {
	AccessPointID string
	RootDir       string
	UID, GID      int64
}

// CreateVolume does what upstream's CreateVolume does on EFS for volume name with StorageClass parameters params
// (including the csi.storage.k8s.io/* keys the provisioner adds): with reuseAccessPoint, find the access point
// holding sha256(PVC name); else list the file system's access points when uid or gid is not fixed, take the
// lowest GID no access point has (in [gidRangeStart, min(gidRangeEnd, gidRangeStart+10000)]), and create the
// access point with the volume name as client token, the root directory upstream builds (the volume name, or the
// expanded subPathPattern followed by "-" and a random UUID unless ensureUniqueDirectory parses as false) and
// creation info owned by uid:gid with directoryPerms. Parameters are assumed valid; errors are EFS's.
func (w *Writer) CreateVolume(ctx context.Context, name string, params map[string]string) (Result, error) {
	fsID := strings.TrimSpace(params["fileSystemId"])
	token := name
	if reuse, _ := strconv.ParseBool(params["reuseAccessPoint"]); reuse {
		sum := sha256.Sum256([]byte(params["csi.storage.k8s.io/pvc/name"]))
		token = hex.EncodeToString(sum[:])
		aps, err := w.list(ctx, fsID)
		if err != nil {
			return Result{}, err
		}
		for _, ap := range aps {
			if aws.ToString(ap.ClientToken) == token {
				return result(ap), nil
			}
		}
	}
	uid, gid := int64(-1), int64(-1)
	if v, ok := params["uid"]; ok {
		uid, _ = strconv.ParseInt(v, 10, 64)
	}
	if v, ok := params["gid"]; ok {
		gid, _ = strconv.ParseInt(v, 10, 64)
	}
	if uid == -1 || gid == -1 {
		aps, err := w.list(ctx, fsID)
		if err != nil {
			return Result{}, err
		}
		free, err := lowestFree(aps, params)
		if err != nil {
			return Result{}, err
		}
		if uid == -1 {
			uid = free
		}
		if gid == -1 {
			gid = free
		}
	}
	root := path.Join("/", params["basePath"], dirName(name, params))
	in := &efs.CreateAccessPointInput{ClientToken: aws.String(token), FileSystemId: aws.String(fsID),
		PosixUser: &types.PosixUser{Uid: aws.Int64(uid), Gid: aws.Int64(gid)},
		RootDirectory: &types.RootDirectory{Path: aws.String(root), CreationInfo: &types.CreationInfo{
			OwnerUid: aws.Int64(uid), OwnerGid: aws.Int64(gid), Permissions: aws.String(params["directoryPerms"])}}}
	if tagging, err := strconv.ParseBool(params["enableTagging"]); err != nil || tagging {
		in.Tags = append(in.Tags, types.Tag{Key: aws.String(clusterTagKey), Value: aws.String(clusterTagValue)})
		for k, v := range w.Tags {
			in.Tags = append(in.Tags, types.Tag{Key: aws.String(k), Value: aws.String(v)})
		}
	}
	out, err := w.efs.CreateAccessPoint(ctx, in)
	if err != nil {
		return Result{}, fmt.Errorf("upstream writer: CreateAccessPoint %s: %w", name, err)
	}
	return Result{AccessPointID: aws.ToString(out.AccessPointId), RootDir: root, UID: uid, GID: gid}, nil
}

func result(ap types.AccessPointDescription) Result {
	r := Result{AccessPointID: aws.ToString(ap.AccessPointId)}
	if ap.RootDirectory != nil {
		r.RootDir = aws.ToString(ap.RootDirectory.Path)
	}
	if ap.PosixUser != nil {
		r.UID, r.GID = aws.ToInt64(ap.PosixUser.Uid), aws.ToInt64(ap.PosixUser.Gid)
	}
	return r
}

// list pages through every access point of the file system, as upstream's ListAccessPoints does.
func (w *Writer) list(ctx context.Context, fsID string) ([]types.AccessPointDescription, error) {
	var all []types.AccessPointDescription
	p := efs.NewDescribeAccessPointsPaginator(w.efs, &efs.DescribeAccessPointsInput{FileSystemId: aws.String(fsID)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("upstream writer: DescribeAccessPoints %s: %w", fsID, err)
		}
		all = append(all, page.AccessPoints...)
	}
	return all, nil
}

// lowestFree is upstream's GID choice: the lowest GID in the range that no access point's POSIX user has.
func lowestFree(aps []types.AccessPointDescription, params map[string]string) (int64, error) {
	lo, hi := int64(defaultGIDMin), int64(defaultGIDMin+perFSLimit)
	if v, ok := params["gidRangeStart"]; ok {
		lo, _ = strconv.ParseInt(v, 10, 64)
		hi, _ = strconv.ParseInt(params["gidRangeEnd"], 10, 64)
	}
	hi = min(hi, lo+perFSLimit)
	used := map[int64]bool{}
	for _, ap := range aps {
		if ap.PosixUser != nil {
			used[aws.ToInt64(ap.PosixUser.Gid)] = true
		}
	}
	for g := lo; g <= hi; g++ {
		if !used[g] {
			return g, nil
		}
	}
	return 0, fmt.Errorf("upstream writer: no free GID in [%d, %d]", lo, hi)
}

// dirName is upstream's directory name: the volume name, or the subPathPattern with its variables replaced by the
// provisioner's values (an absent one by ""), then "-" and a random UUID unless ensureUniqueDirectory is false.
func dirName(name string, params map[string]string) string {
	pattern, ok := params["subPathPattern"]
	if !ok {
		return name
	}
	dir := strings.NewReplacer("${.PV.name}", params["csi.storage.k8s.io/pv/name"], "${.PVC.name}", params["csi.storage.k8s.io/pvc/name"],
		"${.PVC.namespace}", params["csi.storage.k8s.io/pvc/namespace"]).Replace(pattern)
	if unique, err := strconv.ParseBool(params["ensureUniqueDirectory"]); err == nil && !unique {
		return dir
	}
	return dir + "-" + randomUUID()
}

// randomUUID is a version 4 UUID in its canonical lower-case form, as github.com/google/uuid's New().String().
func randomUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}
