package sharedvolume

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
)

const operatorNS = "openshift-cluster-csi-drivers"

// grantsOf returns Grants reading a GrantsConfigMap with data; nil data: no ConfigMap at all.
func grantsOf(t *testing.T, data map[string]string) Grants {
	t.Helper()
	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	if data != nil {
		if err := idx.Add(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: GrantsConfigMap, Namespace: operatorNS}, Data: data}); err != nil {
			t.Fatal(err)
		}
	}
	return Grants{Namespace: operatorNS, ConfigMaps: corelisters.NewConfigMapLister(idx)}
}

func TestGrantsCheck(t *testing.T) {
	spec := Spec{FileSystemID: "fs-0abc", AccessPointID: "fsap-0def"}
	tests := []struct {
		name    string
		data    map[string]string
		ns      string
		wantErr string // "" granted
	}{
		{name: "no ConfigMap", ns: "team-a", wantErr: `adding "fs-0abc::fsap-0def" (or the whole file system, "fs-0abc") under the key "team-a"`},
		{name: "access point granted to the namespace", data: map[string]string{"team-a": "fs-0abc::fsap-0def"}, ns: "team-a"},
		{name: "file system granted to the namespace", data: map[string]string{"team-a": "fs-0999\nfs-0abc"}, ns: "team-a"},
		{name: "granted to every namespace", data: map[string]string{"*": "fs-0abc::fsap-0def"}, ns: "team-a"},
		{name: "granted to another namespace", data: map[string]string{"team-b": "fs-0abc"}, ns: "team-a", wantErr: "not granted to namespace team-a"},
		{name: "another access point of the file system", data: map[string]string{"team-a": "fs-0abc::fsap-0111"}, ns: "team-a", wantErr: "not granted"},
		{name: "a prefix is no grant", data: map[string]string{"team-a": "fs-0ab"}, ns: "team-a", wantErr: "not granted"},
		{name: "malformed entries named", data: map[string]string{"team-a": "fs-0abc::, FS-0ABC, fs-0111"}, ns: "team-a", wantErr: `ignored malformed entries "fs-0abc::", "FS-0ABC"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := grantsOf(t, tc.data).Check(tc.ns, spec)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("Check = %v, want granted", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), operatorNS+"/"+GrantsConfigMap) {
				t.Fatalf("Check = %v, want an error containing %q and naming the ConfigMap", err, tc.wantErr)
			}
		})
	}
}
