package nfsbackend

import (
	"reflect"
	"testing"
)

func TestEntryLineAndParse(t *testing.T) {
	rows := []struct {
		name string
		e    Entry
		want string
	}{
		{"plain", Entry{"127.0.0.1:/", "/var/lib/kubelet/pods/p/mount", "nfsvers=4.1,port=20050"},
			"127.0.0.1:/ /var/lib/kubelet/pods/p/mount nfs4 nfsvers=4.1,port=20050 0 0\n"},
		{"space and backslash", Entry{"127.0.0.1:/a b", "/mnt/x y\\z", "port=1"},
			"127.0.0.1:/a\\040b /mnt/x\\040y\\134z nfs4 port=1 0 0\n"},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			if got := row.e.Line(); got != row.want {
				t.Fatalf("Line() = %q, want %q", got, row.want)
			}
			if got := ParseTable(row.want); len(got) != 1 || got[0] != row.e {
				t.Fatalf("ParseTable(Line()) = %+v, want %+v", got, row.e)
			}
		})
	}
}

func TestParseTableSkipsOtherTypes(t *testing.T) {
	text := "proc /proc proc rw 0 0\n127.0.0.1:/ /m nfs4 port=2 0 0\nbroken\n10.0.0.1:/ /n nfs rw 0 0\n"
	want := []Entry{{"127.0.0.1:/", "/m", "port=2"}, {"10.0.0.1:/", "/n", "rw"}}
	if got := ParseTable(text); !reflect.DeepEqual(got, want) {
		t.Fatalf("ParseTable = %+v, want %+v", got, want)
	}
}

func TestMountPoints(t *testing.T) {
	info := "22 1 0:21 / / rw - ext4 /dev/sda rw\n" +
		"40 22 0:44 /fs-1/dir /var/lib/kubelet/pods/p\\040q/mount rw,relatime shared:1 - ext4 /dev/sda rw\n"
	got := MountPoints(info)
	if !got["/"] || !got["/var/lib/kubelet/pods/p q/mount"] || len(got) != 2 {
		t.Fatalf("MountPoints = %v", got)
	}
}

func TestLive(t *testing.T) {
	a1 := Entry{"127.0.0.1:/", "/a", "port=1"}
	a2 := Entry{"127.0.0.1:/", "/a", "port=2"}
	b := Entry{"127.0.0.1:/", "/b", "port=3"}
	rows := []struct {
		name    string
		entries []Entry
		mounted map[string]bool
		want    []Entry
	}{
		{"unmounted target drops", []Entry{a1, b}, map[string]bool{"/b": true}, []Entry{b}},
		{"a later mount on the same target wins", []Entry{a1, b, a2}, map[string]bool{"/a": true, "/b": true}, []Entry{b, a2}},
		{"nothing mounted", []Entry{a1}, map[string]bool{}, nil},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			if got := Live(row.entries, row.mounted); !reflect.DeepEqual(got, row.want) {
				t.Fatalf("Live = %+v, want %+v", got, row.want)
			}
		})
	}
	if got := Format([]Entry{a1, b}); got != a1.Line()+b.Line() {
		t.Fatalf("Format = %q", got)
	}
}
