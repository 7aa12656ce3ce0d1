package layer

import (
	"compress/gzip"
	"io"
	"os"
)

// gunzip opens a gzip file for reading its decompressed content; closing closes both.
func gunzip(name string) (io.ReadCloser, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	zr, err := gzip.NewReader(f)
	if err != nil {
		f.Close()
		return nil, err
	}
	return &gzipFile{Reader: zr, f: f}, nil
}

type gzipFile struct {
	*gzip.Reader
	f *os.File
}

func (g *gzipFile) Close() error {
	g.Reader.Close()
	return g.f.Close()
}
