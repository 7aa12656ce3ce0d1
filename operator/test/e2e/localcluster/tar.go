package localcluster

import (
	"archive/tar"
	"io"
	"time"
)

// writeTar writes a tar with one executable file.
func writeTar(w io.Writer, name string, data []byte) error {
	tw := tar.NewWriter(w)
	hdr := &tar.Header{Name: name, Mode: 0o755, Size: int64(len(data)), Typeflag: tar.TypeReg, ModTime: time.Unix(0, 0)}
	if err := tw.WriteHeader(hdr); err != nil {
		return err
	}
	if _, err := tw.Write(data); err != nil {
		return err
	}
	return tw.Close()
}
