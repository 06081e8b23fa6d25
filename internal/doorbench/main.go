// Command doorbench attacks a `strata serve` process the way issue reports
// did, all at once, and prints how the server held: a flood of idle
// keep-alive connections, slow bodies trickled a byte a second, and turns
// of 16 MiB without a space (the costliest text to count), while a probe
// asks /healthz every 50 ms. It prints the probe's latencies during the
// attack and the server's peak resident memory.
//
//	go run ./internal/doorbench
//	go run ./internal/doorbench -idle 15000 -slow 200 -spaceless 4 -for 90s
//
// It builds strata, creates a store with a token in a temporary folder,
// and starts the server on a free loopback port with its default
// settings (flags after -- are passed to `strata serve`).
package main

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

func main() {
	idle := flag.Int("idle", 5000, "idle keep-alive connections to open")
	slow := flag.Int("slow", 100, "requests whose body trickles in a byte a second")
	spaceless := flag.Int("spaceless", 4, "concurrent appends of one spaceless turn each")
	size := flag.Int("size", 16<<20, "bytes of each spaceless turn")
	dur := flag.Duration("for", 60*time.Second, "how long the attack lasts")
	flag.Parse()
	if err := run(*idle, *slow, *spaceless, *size, *dur, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "doorbench:", err)
		os.Exit(1)
	}
}

func run(idle, slow, spaceless, size int, dur time.Duration, serveArgs []string) error {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err == nil && lim.Cur < lim.Max {
		lim.Cur = lim.Max
		syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim)
	}
	dir, err := os.MkdirTemp("", "doorbench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "strata")
	if out, err := exec.Command("go", "build", "-o", bin, "./cmd/strata").CombinedOutput(); err != nil {
		return fmt.Errorf("building strata: %v\n%s", err, out)
	}
	env := append(os.Environ(), "STRATA_DB="+filepath.Join(dir, "strata.db"))
	tok := exec.Command(bin, "token", "create", "--namespace", "default")
	tok.Env = env
	out, err := tok.Output()
	if err != nil {
		return fmt.Errorf("strata token create: %v", err)
	}
	token := strings.TrimSpace(string(out))

	serve := exec.Command(bin, append([]string{"serve", "--addr", "127.0.0.1:0"}, serveArgs...)...)
	serve.Env = env
	serve.Stderr = nil // the null device: a pipe drained by this busy process could hold up the server's log writes
	stdout, err := serve.StdoutPipe()
	if err != nil {
		return err
	}
	if err := serve.Start(); err != nil {
		return err
	}
	defer func() { serve.Process.Signal(syscall.SIGTERM); serve.Wait() }()
	lines := bufio.NewScanner(stdout)
	url := ""
	if lines.Scan() {
		url = regexp.MustCompile(`http://127\.0\.0\.1:\d+`).FindString(lines.Text())
	}
	if url == "" {
		return fmt.Errorf("strata serve printed no address")
	}
	go func() {
		for lines.Scan() {
		}
	}()
	addr := strings.TrimPrefix(url, "http://")
	fmt.Printf("strata serve %s at %s (pid %d); attack for %s: %d idle connections, %d slow bodies, %d spaceless turns of %d bytes\n",
		strings.Join(serveArgs, " "), url, serve.Process.Pid, dur, idle, slow, spaceless, size)
	fmt.Printf("machine: %d cores, load average before %s\n", runtime.NumCPU(), loadavg())

	ctx, cancel := context.WithTimeout(context.Background(), dur)
	defer cancel()
	var wg sync.WaitGroup
	var peak atomic.Int64
	wg.Add(1)
	go func() { // the server's resident memory, every 100 ms
		defer wg.Done()
		for ctx.Err() == nil {
			if kb := rssKB(serve.Process.Pid); kb > peak.Load() {
				peak.Store(kb)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}()
	var lat []time.Duration
	var probeFail atomic.Int64
	wg.Add(1)
	go func() { // the probe
		defer wg.Done()
		c := &http.Client{Timeout: 10 * time.Second}
		for ctx.Err() == nil {
			start := time.Now()
			resp, err := c.Get(url + "/healthz")
			if err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			if err != nil || resp.StatusCode != 200 {
				probeFail.Add(1)
			} else {
				lat = append(lat, time.Since(start))
			}
			time.Sleep(50 * time.Millisecond)
		}
	}()

	var held, refused atomic.Int64
	var conns []net.Conn
	var connMu sync.Mutex
	wg.Add(1)
	go func() { // idle keep-alive connections: one request each, then nothing
		defer wg.Done()
		for i := 0; i < idle && ctx.Err() == nil; i++ {
			c, err := net.DialTimeout("tcp", addr, 5*time.Second)
			if err != nil {
				refused.Add(1)
				continue
			}
			fmt.Fprintf(c, "GET /healthz HTTP/1.1\r\nHost: %s\r\n\r\n", addr)
			c.SetReadDeadline(time.Now().Add(5 * time.Second))
			br := bufio.NewReader(c)
			if resp, err := http.ReadResponse(br, nil); err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				held.Add(1)
			}
			connMu.Lock()
			conns = append(conns, c)
			connMu.Unlock()
		}
	}()
	var slowAnswers sync.Map
	for range slow { // slow bodies, authenticated, a byte a second
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := net.DialTimeout("tcp", addr, 5*time.Second)
			if err != nil {
				return
			}
			defer c.Close()
			fmt.Fprintf(c, "POST /v1/conversations/slow/turns HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", addr, token, 1<<20)
			go func() {
				c.SetReadDeadline(time.Now().Add(dur + time.Minute))
				if resp, err := http.ReadResponse(bufio.NewReader(c), nil); err == nil {
					n, _ := slowAnswers.LoadOrStore(resp.StatusCode, new(atomic.Int64))
					n.(*atomic.Int64).Add(1)
					resp.Body.Close()
				}
			}()
			for ctx.Err() == nil {
				if _, err := c.Write([]byte("{")); err != nil {
					return
				}
				time.Sleep(time.Second)
			}
		}()
	}
	var spacelessAnswers sync.Map
	letters := bytes.Repeat([]byte("abcdefghij"), size/10)
	body := []byte(`{"turns":[{"role":"user","content":"` + string(letters) + `"}]}`)
	for i := range spaceless {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url+"/v1/conversations/spaceless-"+strconv.Itoa(i)+"/turns", bytes.NewReader(body))
				req.Header.Set("Authorization", "Bearer "+token)
				req.Header.Set("Content-Type", "application/json")
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					continue
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				n, _ := spacelessAnswers.LoadOrStore(resp.StatusCode, new(atomic.Int64))
				n.(*atomic.Int64).Add(1)
			}
		}()
	}
	<-ctx.Done()
	connMu.Lock()
	for _, c := range conns {
		c.Close()
	}
	connMu.Unlock()
	wg.Wait()

	slices.Sort(lat)
	pct := func(p float64) time.Duration {
		if len(lat) == 0 {
			return 0
		}
		return lat[min(len(lat)-1, int(p*float64(len(lat))))]
	}
	fmt.Printf("healthz during the attack: %d answered, %d failed; p50 %s, p99 %s, max %s\n",
		len(lat), probeFail.Load(), pct(0.5).Round(time.Microsecond), pct(0.99).Round(time.Microsecond), pct(1).Round(time.Microsecond))
	fmt.Printf("server peak resident memory: %.0f MB (VmHWM %.0f MB)\n", float64(peak.Load())/1024, float64(hwmKB(serve.Process.Pid))/1024)
	fmt.Printf("idle connections: %d answered once and held, %d not accepted\n", held.Load(), refused.Load())
	fmt.Printf("slow bodies answered: %s\n", counts(&slowAnswers))
	fmt.Printf("spaceless appends answered: %s\n", counts(&spacelessAnswers))
	fmt.Printf("machine: load average after %s\n", loadavg())
	return nil
}

// loadavg returns the machine's load averages over 1, 5 and 15 minutes:
// the machine may be shared, and the latencies depend on it.
func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], ", ")
}

func counts(m *sync.Map) string {
	var parts []string
	m.Range(func(k, v any) bool {
		parts = append(parts, fmt.Sprintf("%d×%d", v.(*atomic.Int64).Load(), k.(int)))
		return true
	})
	slices.Sort(parts)
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// rssKB and hwmKB read the process's current and peak resident memory.
func rssKB(pid int) int64 { return statusKB(pid, "VmRSS:") }
func hwmKB(pid int) int64 { return statusKB(pid, "VmHWM:") }

func statusKB(pid int, field string) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, field); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return n
		}
	}
	return 0
}
