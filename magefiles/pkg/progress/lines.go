package progress

import (
	"fmt"
	"io"
	"sync"
)

// Lines writes whole lines to one writer shared by goroutines. Its zero value, like a nil writer, discards them.
type Lines struct {
	mu sync.Mutex
	w  io.Writer
}

// New returns Lines writing to w; a nil w discards every line.
func New(w io.Writer) *Lines {
	return &Lines{w: w}
}

// Printf formats one line, adds the newline and writes it while no other goroutine writes.
func (l *Lines) Printf(format string, args ...any) {
	if l == nil || l.w == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(l.w, format+"\n", args...)
}
