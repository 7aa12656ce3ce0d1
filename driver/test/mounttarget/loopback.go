package mounttarget

import (
	"crypto/rand"
	"fmt"
	"net"
)

// NFSPort is the port of EFS mount targets.
const NFSPort = 2049

// FreeLoopback returns a 127.x.y.z address (all of 127/8 is local on Linux) whose NFS port is free at the time of
// the call, chosen at random so that tests running at the same time do not collide.
func FreeLoopback() (string, error) {
	for range 100 {
		b := make([]byte, 3)
		if _, err := rand.Read(b); err != nil {
			return "", err
		}
		ip := fmt.Sprintf("127.%d.%d.%d", 1+b[0]%250, b[1], 2+b[2]%250)
		l, err := net.Listen("tcp", net.JoinHostPort(ip, fmt.Sprint(NFSPort)))
		if err == nil {
			_ = l.Close()
			return ip, nil
		}
	}
	return "", fmt.Errorf("mounttarget: no free loopback address for port %d after 100 tries", NFSPort)
}
