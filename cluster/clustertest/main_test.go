package clustertest_test

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"strings"
	"testing"
	"time"
)

// helperEnv makes the test binary act as a helper process inside a host
// instead of running tests: "echo" serves TCP, "dial" makes one request.
const helperEnv = "CLUSTERTEST_HELPER"

// addrEnv is the address the dial helper connects to.
const addrEnv = "CLUSTERTEST_ADDR"

func TestMain(m *testing.M) {
	switch os.Getenv(helperEnv) {
	case "echo":
		os.Exit(echoServer())
	case "dial":
		os.Exit(dialOnce(os.Getenv(addrEnv), os.Args[len(os.Args)-1]))
	}
	os.Exit(m.Run())
}

// echoServer listens on a kernel-chosen port on all addresses, prints
// "listening PORT", and answers each line with "HOSTNAME LINE".
func echoServer() int {
	ln, err := net.Listen("tcp", ":0")
	if err != nil {
		fmt.Fprintln(os.Stderr, "listen:", err)
		return 1
	}
	host, _ := os.Hostname()
	fmt.Printf("listening %d\n", ln.Addr().(*net.TCPAddr).Port)
	for {
		conn, err := ln.Accept()
		if err != nil {
			fmt.Fprintln(os.Stderr, "accept:", err)
			return 1
		}
		go func() {
			defer func() { _ = conn.Close() }()
			_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
			line, err := bufio.NewReader(conn).ReadString('\n')
			if err == nil {
				_, _ = fmt.Fprintf(conn, "%s %s", host, line)
			}
		}()
	}
}

// dialOnce sends token to addr and prints the reply, within one second.
func dialOnce(addr, token string) int {
	conn, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		fmt.Fprintln(os.Stderr, "dial:", err)
		return 1
	}
	defer func() { _ = conn.Close() }()
	_ = conn.SetDeadline(time.Now().Add(time.Second))
	if _, err := fmt.Fprintln(conn, token); err != nil {
		fmt.Fprintln(os.Stderr, "write:", err)
		return 1
	}
	reply, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil {
		fmt.Fprintln(os.Stderr, "read:", err)
		return 1
	}
	fmt.Print(strings.TrimSpace(reply))
	return 0
}
