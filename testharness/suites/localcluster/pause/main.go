// Command pause is the local cluster's sandbox (pause) image and its smallest test container: it says it started,
// then sleeps until SIGTERM or SIGINT and exits 0. It is a static Go binary, the only file of its image.
package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	fmt.Println("pause: started")
	s := <-sig
	fmt.Printf("pause: %s, exiting\n", s)
}
