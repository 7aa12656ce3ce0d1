package progress

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"
)

// lockedBuffer fails the test when two writes overlap, which is what Lines must prevent.
type lockedBuffer struct {
	mu      sync.Mutex
	busy    bool
	buf     bytes.Buffer
	overlap bool
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	if b.busy {
		b.overlap = true
	}
	b.busy = true
	b.mu.Unlock()
	// Write byte by byte so that an unserialised writer would interleave.
	for i := range p {
		b.mu.Lock()
		b.buf.WriteByte(p[i])
		b.mu.Unlock()
	}
	b.mu.Lock()
	b.busy = false
	b.mu.Unlock()
	return len(p), nil
}

func TestPrintfWritesWholeLinesFromManyGoroutines(t *testing.T) {
	out := &lockedBuffer{}
	l := New(out)
	const workers, each = 8, 50
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				l.Printf("worker %d line %d", w, i)
			}
		}()
	}
	wg.Wait()
	if out.overlap {
		t.Error("two Printf calls wrote at the same time")
	}
	lines := strings.Split(strings.TrimSuffix(out.buf.String(), "\n"), "\n")
	if len(lines) != workers*each {
		t.Fatalf("got %d lines, want %d", len(lines), workers*each)
	}
	seen := map[string]bool{}
	for _, line := range lines {
		seen[line] = true
	}
	for w := range workers {
		for i := range each {
			if want := fmt.Sprintf("worker %d line %d", w, i); !seen[want] {
				t.Fatalf("line %q missing or garbled", want)
			}
		}
	}
}

func TestPrintfWithoutWriterDiscards(t *testing.T) {
	for name, l := range map[string]*Lines{"nil writer": New(nil), "zero value": {}, "nil *Lines": nil} {
		t.Run(name, func(t *testing.T) {
			l.Printf("dropped %d", 1) // must not panic
		})
	}
}
