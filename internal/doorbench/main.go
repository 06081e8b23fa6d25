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
// settings (flags after -- are passed to `strata serve`). The probe runs
// in a process of its own, so that the attackers' work (building and
// sending 16 MiB bodies) does not delay it.
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
	probe := flag.String("probe", "", "run as the probe of the server at this URL (used by doorbench itself)")
	flag.Parse()
	var err error
	if *probe != "" {
		err = runProbe(*probe, *dur)
	} else {
		err = run(attack{idle: *idle, slow: *slow, spaceless: *spaceless, size: *size, dur: *dur}, flag.Args())
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "doorbench:", err)
		os.Exit(1)
	}
}

// attack is what is thrown at the server, all at once.
type attack struct {
	idle, slow, spaceless, size int
	dur                         time.Duration
}

// server is the strata serve process under attack.
type server struct {
	cmd   *exec.Cmd
	url   string
	addr  string
	token string
}

// tally counts the answers of one kind of request by status.
type tally struct{ m sync.Map }

func (t *tally) add(status int) {
	n, _ := t.m.LoadOrStore(status, new(atomic.Int64))
	n.(*atomic.Int64).Add(1)
}

func run(a attack, serveArgs []string) error {
	raiseFileLimit()
	dir, err := os.MkdirTemp("", "doorbench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	srv, err := startServer(dir, serveArgs)
	if err != nil {
		return err
	}
	defer func() { srv.cmd.Process.Signal(syscall.SIGTERM); srv.cmd.Wait() }()
	fmt.Printf("strata serve %s at %s (pid %d); attack for %s: %d idle connections, %d slow bodies, %d spaceless turns of %d bytes\n",
		strings.Join(serveArgs, " "), srv.url, srv.cmd.Process.Pid, a.dur, a.idle, a.slow, a.spaceless, a.size)
	fmt.Printf("machine: %d cores, load average before %s\n", runtime.NumCPU(), loadavg())

	probe, err := startProbe(srv.url, a.dur)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), a.dur)
	defer cancel()
	var wg sync.WaitGroup
	var peak atomic.Int64
	wg.Add(1)
	go func() { defer wg.Done(); watchMemory(ctx, srv.cmd.Process.Pid, &peak) }()
	var held, refused atomic.Int64
	var slowAnswers, spacelessAnswers tally
	closeIdle := holdIdle(ctx, &wg, srv.addr, a.idle, &held, &refused)
	trickle(ctx, &wg, srv, a.slow, a.dur, &slowAnswers)
	appendSpaceless(ctx, &wg, srv, a.spaceless, a.size, &spacelessAnswers)
	<-ctx.Done()
	closeIdle()
	wg.Wait()
	lat, fails, err := probe()
	if err != nil {
		return err
	}

	printLatencies(lat, fails)
	fmt.Printf("server peak resident memory: %.0f MB (VmHWM %.0f MB)\n", float64(peak.Load())/1024, float64(hwmKB(srv.cmd.Process.Pid))/1024)
	fmt.Printf("idle connections: %d answered once and held, %d not accepted\n", held.Load(), refused.Load())
	fmt.Printf("slow bodies answered: %s\n", counts(&slowAnswers))
	fmt.Printf("spaceless appends answered: %s\n", counts(&spacelessAnswers))
	fmt.Printf("machine: load average after %s\n", loadavg())
	return nil
}

// raiseFileLimit lifts the soft limit on open files to the hard one: the
// idle connections need one each.
func raiseFileLimit() {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err == nil && lim.Cur < lim.Max {
		lim.Cur = lim.Max
		syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim)
	}
}

// startServer builds strata into dir, creates a store there with a token,
// and starts strata serve on a free loopback port.
func startServer(dir string, serveArgs []string) (*server, error) {
	bin := filepath.Join(dir, "strata")
	if out, err := exec.Command("go", "build", "-o", bin, "./cmd/strata").CombinedOutput(); err != nil {
		return nil, fmt.Errorf("building strata: %v\n%s", err, out)
	}
	env := append(os.Environ(), "STRATA_DB="+filepath.Join(dir, "strata.db"))
	tok := exec.Command(bin, "token", "create", "--namespace", "default")
	tok.Env = env
	out, err := tok.Output()
	if err != nil {
		return nil, fmt.Errorf("strata token create: %v", err)
	}
	cmd := exec.Command(bin, append([]string{"serve", "--addr", "127.0.0.1:0"}, serveArgs...)...)
	cmd.Env = env
	cmd.Stderr = nil // the null device: a pipe drained by this busy process could hold up the server's log writes
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	lines := bufio.NewScanner(stdout)
	url := ""
	if lines.Scan() {
		url = regexp.MustCompile(`http://127\.0\.0\.1:\d+`).FindString(lines.Text())
	}
	if url == "" {
		cmd.Process.Kill()
		cmd.Wait()
		return nil, fmt.Errorf("strata serve printed no address")
	}
	go func() {
		for lines.Scan() {
		}
	}()
	return &server{cmd: cmd, url: url, addr: strings.TrimPrefix(url, "http://"), token: strings.TrimSpace(string(out))}, nil
}

// startProbe starts this program again as the probe of url for d; the
// function it returns waits for the probe and reads its latencies.
func startProbe(url string, d time.Duration) (func() ([]time.Duration, int, error), error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(self, "-probe", url, "-for", d.String())
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return func() ([]time.Duration, int, error) {
		var lat []time.Duration
		fails := 0
		lines := bufio.NewScanner(out)
		for lines.Scan() {
			if lines.Text() == "fail" {
				fails++
				continue
			}
			n, err := strconv.ParseInt(lines.Text(), 10, 64)
			if err != nil {
				return nil, 0, fmt.Errorf("the probe wrote %q", lines.Text())
			}
			lat = append(lat, time.Duration(n))
		}
		if err := cmd.Wait(); err != nil {
			return nil, 0, fmt.Errorf("the probe: %v", err)
		}
		return lat, fails, nil
	}, nil
}

// runProbe asks url's /healthz every 50 ms for d and writes each answer's
// latency in nanoseconds, or "fail", a line each.
func runProbe(url string, d time.Duration) error {
	w := bufio.NewWriter(os.Stdout)
	c := &http.Client{Timeout: 10 * time.Second}
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		start := time.Now()
		resp, err := c.Get(url + "/healthz")
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		if err != nil || resp.StatusCode != http.StatusOK {
			fmt.Fprintln(w, "fail")
			continue
		}
		fmt.Fprintln(w, int64(time.Since(start)))
	}
	return w.Flush()
}

// watchMemory records the server's peak resident memory, read every 100 ms.
func watchMemory(ctx context.Context, pid int, peak *atomic.Int64) {
	for ctx.Err() == nil {
		if kb := rssKB(pid); kb > peak.Load() {
			peak.Store(kb)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// holdIdle opens n keep-alive connections, sends one request on each and
// then nothing; the function it returns closes them.
func holdIdle(ctx context.Context, wg *sync.WaitGroup, addr string, n int, held, refused *atomic.Int64) func() {
	var conns []net.Conn
	var mu sync.Mutex
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < n && ctx.Err() == nil; i++ {
			c, err := net.DialTimeout("tcp", addr, 5*time.Second)
			if err != nil {
				refused.Add(1)
				continue
			}
			fmt.Fprintf(c, "GET /healthz HTTP/1.1\r\nHost: %s\r\n\r\n", addr)
			c.SetReadDeadline(time.Now().Add(5 * time.Second))
			if resp, err := http.ReadResponse(bufio.NewReader(c), nil); err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				held.Add(1)
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	return func() {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	}
}

// trickle sends n authenticated appends whose bodies arrive a byte a
// second, and counts the answers they get.
func trickle(ctx context.Context, wg *sync.WaitGroup, srv *server, n int, d time.Duration, answers *tally) {
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := net.DialTimeout("tcp", srv.addr, 5*time.Second)
			if err != nil {
				return
			}
			defer c.Close()
			fmt.Fprintf(c, "POST /v1/conversations/slow/turns HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", srv.addr, srv.token, 1<<20)
			go func() {
				c.SetReadDeadline(time.Now().Add(d + time.Minute))
				if resp, err := http.ReadResponse(bufio.NewReader(c), nil); err == nil {
					answers.add(resp.StatusCode)
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
}

// appendSpaceless runs n writers, each appending a turn of size bytes
// without a space to a conversation of its own, again and again.
func appendSpaceless(ctx context.Context, wg *sync.WaitGroup, srv *server, n, size int, answers *tally) {
	letters := bytes.Repeat([]byte("abcdefghij"), size/10)
	body := []byte(`{"turns":[{"role":"user","content":"` + string(letters) + `"}]}`)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.url+"/v1/conversations/spaceless-"+strconv.Itoa(i)+"/turns", bytes.NewReader(body))
				req.Header.Set("Authorization", "Bearer "+srv.token)
				req.Header.Set("Content-Type", "application/json")
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					continue
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				answers.add(resp.StatusCode)
			}
		}()
	}
}

// printLatencies prints the probe's percentiles and how many answers took
// 100 ms or more.
func printLatencies(lat []time.Duration, fails int) {
	slices.Sort(lat)
	pct := func(p float64) time.Duration {
		if len(lat) == 0 {
			return 0
		}
		return lat[min(len(lat)-1, int(p*float64(len(lat))))]
	}
	slow := 0
	for _, l := range lat {
		if l >= 100*time.Millisecond {
			slow++
		}
	}
	fmt.Printf("healthz during the attack: %d answered, %d failed; p50 %s, p99 %s, max %s; %d took 100 ms or more\n",
		len(lat), fails, pct(0.5).Round(time.Microsecond), pct(0.99).Round(time.Microsecond), pct(1).Round(time.Microsecond), slow)
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

func counts(t *tally) string {
	var parts []string
	t.m.Range(func(k, v any) bool {
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
