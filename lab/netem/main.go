// netem is the lab's userland stand-in for tc-netem (this kernel has none): it binds one NFQUEUE
// number, holds every queued packet for delay±jitter and drops a seeded fraction of them.
//
// Lifecycle: bind the queue, print "ready" on stdout, hand out verdicts until SIGTERM/SIGINT, then
// accept whatever is still held (so no packet is stranded) and exit 0. Counters go to stderr.
//
// It must run inside the namespace whose INPUT chain sends packets to the queue (queues are per
// network namespace); the lab delays on the receiving side because holding packets on the way out
// blocks the sender's socket and inflates TCP/TLS times.
package main

import (
	"container/heap"
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	nfqueue "github.com/florianl/go-nfqueue/v2"
	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

const (
	fineWindow = 2 * time.Millisecond   // closer than this to a due time, sleep precisely
	fineSlice  = 250 * time.Microsecond // longest precise sleep between looks at the queue
)

type held struct {
	id  uint32
	due time.Time
	seq uint64 // ties keep arrival order, so zero jitter never reorders
}

type holdQueue []held

func (q holdQueue) Len() int { return len(q) }
func (q holdQueue) Less(i, j int) bool {
	if q[i].due.Equal(q[j].due) {
		return q[i].seq < q[j].seq
	}
	return q[i].due.Before(q[j].due)
}
func (q holdQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *holdQueue) Push(x any)   { *q = append(*q, x.(held)) }
func (q *holdQueue) Pop() any {
	old := *q
	it := old[len(old)-1]
	*q = old[:len(old)-1]
	return it
}

func main() {
	queue := flag.Uint("queue", 0, "NFQUEUE number to bind")
	delay := flag.Float64("delay", 0, "one-way delay in ms")
	jitter := flag.Float64("jitter", 0, "uniform jitter in ms: each packet waits delay±jitter")
	loss := flag.Float64("loss", 0, "percentage of packets dropped")
	seed := flag.Uint64("seed", 1, "seed of the loss and jitter draws")
	flag.Parse()
	if *queue > 65535 || *delay < 0 || *jitter < 0 || *loss < 0 || *loss > 100 {
		fmt.Fprintln(os.Stderr, "netem: bad flags: need --queue 0..65535, --delay/--jitter >= 0, --loss 0..100")
		os.Exit(2)
	}
	if err := run(uint16(*queue), *delay, *jitter, *loss, *seed); err != nil {
		fmt.Fprintln(os.Stderr, "netem:", err)
		os.Exit(1)
	}
}

func ms(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }

func run(queue uint16, delayMs, jitterMs, lossPct float64, seed uint64) error {
	nf, err := nfqueue.Open(&nfqueue.Config{
		NfQueue:      queue,
		MaxPacketLen: 0,
		MaxQueueLen:  8192, // a full kernel queue drops silently; keep it well above a lab burst
		Copymode:     nfqueue.NfQnlCopyMeta,
		WriteTimeout: 50 * time.Millisecond,
	})
	if err != nil {
		return fmt.Errorf("open nfqueue %d: %w", queue, err)
	}
	defer nf.Close()
	// Under load the kernel reports ENOBUFS instead of blocking; losing a read is better than dying.
	_ = nf.SetOption(netlink.NoENOBUFS, true)

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()

	var (
		mu       sync.Mutex
		pending  holdQueue
		seq      uint64
		seen     uint64
		dropped  uint64
		released uint64
		late     time.Duration // summed lateness of releases, reported so drift is visible
		wake     = make(chan struct{}, 1)
		rng      = rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
		verdicts sync.Mutex // the netlink socket is shared by the reader and the releaser
	)
	verdict := func(id uint32, v int) {
		verdicts.Lock()
		defer verdicts.Unlock()
		_ = nf.SetVerdict(id, v)
	}

	hook := func(a nfqueue.Attribute) int {
		if a.PacketID == nil {
			return 0
		}
		id := *a.PacketID
		mu.Lock()
		seen++
		if lossPct > 0 && rng.Float64()*100 < lossPct {
			dropped++
			mu.Unlock()
			verdict(id, nfqueue.NfDrop)
			return 0
		}
		d := delayMs
		if jitterMs > 0 {
			d += (rng.Float64()*2 - 1) * jitterMs
		}
		if d < 0 {
			d = 0
		}
		seq++
		heap.Push(&pending, held{id: id, due: time.Now().Add(ms(d)), seq: seq})
		mu.Unlock()
		select {
		case wake <- struct{}{}:
		default:
		}
		return 0
	}
	onErr := func(e error) int {
		if ctx.Err() != nil {
			return 1
		}
		var op *netlink.OpError
		if errors.As(e, &op) && (op.Timeout() || op.Temporary()) {
			return 0
		}
		fmt.Fprintln(os.Stderr, "netem: receive:", e)
		return 0
	}
	if err := nf.RegisterWithErrorFunc(ctx, hook, onErr); err != nil {
		return fmt.Errorf("bind nfqueue %d: %w", queue, err)
	}
	fmt.Println("ready")

	// One releaser goroutine, so verdicts leave in due order rather than in timer-firing order.
	timer := time.NewTimer(time.Hour)
	for {
		mu.Lock()
		now := time.Now()
		var due []uint32
		for pending.Len() > 0 && !pending[0].due.After(now) {
			h := heap.Pop(&pending).(held)
			due = append(due, h.id)
			late += now.Sub(h.due)
			released++
		}
		wait := time.Duration(-1)
		if pending.Len() > 0 {
			wait = pending[0].due.Sub(now)
		}
		mu.Unlock()
		for _, id := range due {
			verdict(id, nfqueue.NfAccept)
		}
		if ctx.Err() == nil && wait >= 0 && wait <= fineWindow {
			// The runtime's timers wake up to ~1 ms late when idle (epoll's ms timeout); a plain
			// nanosleep lands within tens of µs. Short slices keep jittered early arrivals on time.
			ts := unix.NsecToTimespec(int64(min(wait, fineSlice)))
			_ = unix.Nanosleep(&ts, nil)
			continue
		}
		if wait > fineWindow {
			timer.Reset(wait - fineWindow)
		}
		select {
		case <-ctx.Done():
			mu.Lock()
			for pending.Len() > 0 {
				verdict(heap.Pop(&pending).(held).id, nfqueue.NfAccept)
			}
			fmt.Fprintf(os.Stderr, "netem: queue %d: %d packets, %d dropped, mean release lateness %v\n",
				queue, seen, dropped, late/time.Duration(max(released, 1)))
			mu.Unlock()
			return nil
		case <-wake:
		case <-timer.C:
		}
	}
}
