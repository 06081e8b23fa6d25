package loomgen

import (
	"fmt"
	"strings"
	"time"
)

// Training: SLURM jobs running torchrun, Ray Tune sweeps, a Triton
// Inference Server and the run trackers (MLflow, W&B).

var trainFiles = []string{"trainer_ddp.py", "shard_loader.py", "ckpt_io.py", "lr_sched.py", "token_pack.py", "eval_hooks.py", "dist_env.py"}

var jobNames = []string{"eval-harness", "tok-shard", "ray-head", "strand-cavity", "loomsim-sweep", "embed-export", "dedup-minhash", "rm-train", "sft-mix", "ckpt-convert"}

// sacctTable writes an accounting table of many jobs. follow is the job
// the agent goes on to look at (ambient, failed); failing jobs are written
// as failure lines, a few of them with planted ids, and a few completed
// jobs get planted passing ids.
func (g *gen) sacctTable(o *out, follow, followName, node string, nodes int) {
	o.add("JobID           JobName  Partition    Account      State ExitCode    Elapsed        NodeList")
	o.add("------------ ---------- ---------- ---------- ---------- -------- ---------- ---------------")
	row := func(id, name, part, state, exit, el, nl string, failing bool) {
		line := fmt.Sprintf("%-12s %10s %10s %10s %10s %8s %10s %15s", trunc(id, 12), trunc(name, 10), part, "warp-res", state, exit, el, nl)
		o.put(line, failing)
	}
	job := func(id, name, state string, failing bool) {
		part := g.pick("h100", "a100", "cpu", "h100")
		nk := map[string]string{"h100": "wh100", "a100": "wa100", "cpu": "lfc"}[part]
		n0 := g.n(101, 880)
		nl := fmt.Sprintf("%s-[%04d-%04d]", nk, n0, n0+g.n(1, 7))
		el := fmt.Sprintf("%02d:%02d:%02d", g.n(0, 23), g.n(0, 59), g.n(0, 59))
		if state == "PENDING" {
			el = "00:00:00"
			nl = "None assigned"
		}
		exit := "0:0"
		switch state {
		case "FAILED":
			exit = g.pick("1:0", "2:0", "137:0")
		case "OUT_OF_MEMORY":
			exit = "0:125"
		case "CANCELLED":
			exit = "0:15"
		}
		row(id, name, part, state, exit, el, nl, failing)
		row(id+".batch", "batch", "", state, exit, el, fmt.Sprintf("%s-%04d", nk, n0), failing)
		row(id+".extern", "extern", "", g.pick("COMPLETED", state), "0:0", el, nl, failing)
		if g.chance(0.6) {
			row(id+".0", g.pick("torchrun", "python", "julia", "strand"), "", state, exit, el, nl, failing)
		}
	}
	planted := 0
	passing := 0
	wantFail := g.n(1, 2)
	wantPass := g.n(1, 2)
	followAt := g.r.Float64()
	o.fill(o.budget(0.5), func() {
		name := g.pickN(jobNames)
		switch x := g.r.Float64(); {
		case x < 0.12:
			state := g.pick("FAILED", "TIMEOUT", "OUT_OF_MEMORY", "NODE_FAIL", "PREEMPTED")
			id := ""
			if planted < wantFail {
				id = g.E("id", g.mkJob())
				planted++
			} else {
				id = g.A(g.mkJob())
			}
			job(id, name, state, true)
		case x < 0.2:
			job(g.A(g.mkJob()), name, g.pick("RUNNING", "PENDING", "CANCELLED"), false)
		default:
			id := ""
			if passing < wantPass && g.chance(0.3) {
				id = g.P("id", g.mkJob())
				passing++
			} else {
				id = g.A(g.mkJob())
			}
			job(id, name, "COMPLETED", false)
		}
	}, at{followAt, func() {
		st := g.pick("NODE_FAIL", "FAILED")
		el := fmt.Sprintf("%02d:%02d:%02d", g.n(3, 11), g.n(0, 59), g.n(0, 59))
		nl := fmt.Sprintf("%s-[%s-%04d]", node[:5], node[6:], atoi(node[6:])+nodes-1)
		ex := map[string]string{"NODE_FAIL": "0:0", "FAILED": "1:0"}[st]
		row(follow, followName, "h100", st, ex, el, nl, true)
		row(follow+".batch", "batch", "", "CANCELLED", "0:15", el, node, true)
		row(follow+".extern", "extern", "", "COMPLETED", "0:0", el, nl, false)
		row(follow+".0", "torchrun", "", "FAILED", ex, el, nl, true)
	}})
	for planted < wantFail {
		job(g.E("id", g.mkJob()), g.pickN(jobNames), g.pick("TIMEOUT", "NODE_FAIL"), true)
		planted++
	}
	for passing < wantPass {
		job(g.P("id", g.mkJob()), g.pickN(jobNames), "COMPLETED", false)
		passing++
	}
}

func trunc(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-1] + "+"
}

func atoi(s string) int {
	n := 0
	for _, c := range s {
		if c >= '0' && c <= '9' {
			n = n*10 + int(c-'0')
		}
	}
	return n
}

// rankLog writes rank-prefixed torchrun progress for nodes hosts, starting
// at step.
type rankLog struct {
	g     *gen
	o     *out
	c     *clock
	hosts []string
	step  int
	total int
	model string
	pids  []int
}

func (g *gen) newRankLog(o *out, hosts []string, step int, model string) *rankLog {
	rl := &rankLog{g: g, o: o, c: g.clockFrom(time.Duration(g.n(3, 9)) * time.Hour), hosts: hosts, step: step, total: 250000, model: model}
	for range len(hosts) * 8 {
		rl.pids = append(rl.pids, g.n(1800, 8999))
	}
	return rl
}

func glogTime(prefix string, t time.Time) string {
	return fmt.Sprintf("%s%s %s", prefix, t.Format("0102"), t.Format("15:04:05.000000"))
}

func (rl *rankLog) line() {
	g, o := rl.g, rl.o
	t := rl.c.tick(4000)
	nr := len(rl.hosts) * 8
	r := g.r.IntN(nr)
	switch x := g.r.Float64(); {
	case x < 0.42:
		rl.step += g.n(5, 25)
		o.addf("[rank0]: step %d/%d | loss %s | lr %se-04 | grad_norm %s | tok/s %sk | mfu %s%% | mem %sG",
			rl.step, rl.total, g.f(1.9, 2.6, 4), g.f(1.5, 3.0, 2), g.f(0.2, 1.4, 3), g.f(380, 440, 1), g.f(38, 46, 1), g.f(58, 66, 1))
	case x < 0.6:
		h := rl.hosts[r/8]
		lr := r % 8
		o.addf("%s:%d:%d [%d] NCCL INFO Channel %02d/0 : %d[%d] -> %d[%d] via %s", h, rl.pids[r], rl.pids[r]+g.n(10, 30), lr,
			g.n(0, 31), r, lr, (r+1)%nr, (lr+1)%8, g.pick("P2P/CUMEM/read", "NET/IB/0/GDRDMA", "NET/IB/3/GDRDMA", "P2P/IPC"))
	case x < 0.68:
		o.addf("[rank%d]: data: shard %04d/2048 tokens %sB prefetch_q=%d wait_ms=%s", r, g.n(1, 2047), g.f(0.5, 3, 2), g.n(2, 8), g.f(0.1, 9, 1))
	case x < 0.74:
		o.addf("[rank%d]:[W%s ProcessGroupNCCL.cpp:%d] [PG 0 Rank %d] %s", r, glogTime("", t)[0:20], 4115, r,
			g.pick("using GPU to perform barrier as devices used by this process are currently unknown.",
				"ProcessGroupNCCL.abort() was not called before the process group was destroyed, consider calling it explicitly.",
				"NCCL heartbeat monitor: last enqueued work is older than 30 seconds, waiting for completion."))
	case x < 0.8:
		o.addf("[%s,%03d] torch.distributed.elastic.agent.server.api: [INFO] [default] %s", t.Format("2006-01-02 15:04:05"), g.n(0, 999),
			g.pick("Monitoring worker group health.", "worker group state: HEALTHY", "Rendezvous round complete, group_rank assignment stable.",
				fmt.Sprintf("Local worker group finished heartbeat check (%d workers).", 8)))
	case x < 0.86:
		rl.step += 50
		o.addf("[rank0]: eval @ step %d: val/loss %s val/ppl %s (%d batches, %ss)", rl.step, g.f(2.0, 2.5, 4), g.f(7, 12, 2), g.n(64, 256), g.f(20, 90, 1))
	case x < 0.9:
		o.addf("[rank%d]: /srv/warp/.venv/lib/python3.11/site-packages/torch/utils/checkpoint.py:%s: UserWarning: %s", r, g.pick("91", "1399"),
			g.pick("None of the inputs have requires_grad=True. Gradients will be None",
				"torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly."))
	case x < 0.94:
		st := (rl.step / 2000) * 2000
		o.addf("[rank0]: saved checkpoint step_%08d to /lus/warp/ckpt/%s/step_%08d (%ss, %s GiB)", st, rl.model, st, g.f(30, 60, 1), g.f(30, 120, 1))
	default:
		h := rl.hosts[r/8]
		o.addf("%s:%d:%d [%d] NCCL INFO comm %#x rank %d nRanks %d nNodes %d localRanks 8 localRank %d MNNVL 0", h, rl.pids[r], rl.pids[r]+2, r%8,
			0x55d000000000+g.r.IntN(1<<30), r, nr, len(rl.hosts), r%8)
	}
}

// ncclTimeout writes the watchdog failure of one rank.
func (rl *rankLog) ncclTimeout(rank int, seq string) {
	g, o := rl.g, rl.o
	t := rl.c.tick(2000)
	tt := glogTime("E", t)
	num := g.pick("67108864", "33554432", "16777216")
	o.failf("[rank%d]:[%s ProcessGroupNCCL.cpp:616] [Rank %d] Watchdog caught collective operation timeout: WorkNCCL(%s, OpType=ALLREDUCE, NumelIn=%s, NumelOut=%s, Timeout(ms)=600000) ran for %d milliseconds before timing out.",
		rank, tt, rank, seq, num, num, 600000+g.n(10, 90))
	o.failf("[rank%d]:[%s ProcessGroupNCCL.cpp:1785] [PG 0 (default_pg) Rank %d] Exception (either an error or timeout) detected by watchdog at work: %s, last enqueued NCCL work: %s, last completed NCCL work: %s.",
		rank, tt, rank, seq[7:], itoa(atoi(seq)+1), itoa(atoi(seq)-1))
	o.failf("[rank%d]:[%s ProcessGroupNCCL.cpp:630] [Rank %d] Some NCCL operations have failed or timed out. Due to the asynchronous nature of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data.", rank, tt, rank)
	o.failf("[rank%d]:[%s ProcessGroupNCCL.cpp:636] [Rank %d] To avoid data inconsistency, we are taking the entire process down.", rank, tt, rank)
	o.failf("[rank%d]:[F%s ProcessGroupNCCL.cpp:1595] [PG 0 (default_pg) Rank %d] Process group watchdog thread terminated with exception: [Rank %d] Watchdog caught collective operation timeout: WorkNCCL(%s, OpType=ALLREDUCE, Timeout(ms)=600000)",
		rank, glogTime("", t)[0:20], rank, rank, seq)
}

func itoa(n int) string { return fmt.Sprint(n) }

// oom writes a CUDA out-of-memory traceback of one rank; frame is the
// planted frame of the innermost Warp file.
func (rl *rankLog) oom(rank int, frame string) {
	g, o := rl.g, rl.o
	p := func(s string) { o.failf("[rank%d]: %s", rank, s) }
	p("Traceback (most recent call last):")
	p(fmt.Sprintf(`  File "/srv/warp/warp/train/%s, in <module>`, g.A(g.mkPySite("trainer_ddp.py"))))
	p("    main()")
	p(fmt.Sprintf(`  File "/srv/warp/warp/train/%s, in main`, g.A(g.mkPySite("trainer_ddp.py"))))
	p("    loss = train_step(model, batch, scaler, accum=cfg.grad_accum)")
	p(`  File "/srv/warp/.venv/lib/python3.11/site-packages/torch/nn/modules/module.py", line 1553, in _wrapped_call_impl`)
	p("    return self._call_impl(*args, **kwargs)")
	p(`  File "/srv/warp/.venv/lib/python3.11/site-packages/torch/nn/modules/module.py", line 1562, in _call_impl`)
	p("    return forward_call(*args, **kwargs)")
	p(fmt.Sprintf(`  File "/srv/warp/warp/train/%s, in forward`, frame))
	p("    scores = torch.matmul(q, k.transpose(-2, -1)) * self.scale")
	gib := g.pick("2.00", "4.00", "8.00", "3.52", "6.25")
	tot := g.pick("79.11", "79.15", "39.39")
	p(fmt.Sprintf("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate %s GiB. GPU %d has a total capacity of %s GiB of which %s GiB is free. Including non-PyTorch memory, this process has %s GiB memory in use. Of the allocated memory %s GiB is allocated by PyTorch, and %s GiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.",
		gib, rank%8, tot, g.f(0.3, 3, 2), g.f(70, 78, 2), g.f(60, 70, 2), g.f(2, 6, 2)))
}

// elasticFailure writes torchrun's ChildFailedError report.
func (rl *rankLog) elasticFailure(rank int, host string, sig string) {
	g, o := rl.g, rl.o
	t := rl.c.tick(30000)
	pid := rl.pids[rank%len(rl.pids)]
	agent := g.n(1500, 1799)
	o.addf("W%s %d torch/distributed/elastic/multiprocessing/api.py:897] Sending process %d closing signal SIGTERM", glogTime("", t)[0:20], agent, pid+1)
	o.addf("W%s %d torch/distributed/elastic/multiprocessing/api.py:897] Sending process %d closing signal SIGTERM", glogTime("", t)[0:20], agent, pid+2)
	code := map[string]string{"SIGABRT": "-6", "SIGKILL": "-9"}[sig]
	o.failf("%s %d torch/distributed/elastic/multiprocessing/api.py:869] failed (exitcode: %s) local_rank: %d (pid: %d) of binary: /srv/warp/.venv/bin/python3", glogTime("E", t), agent, code, rank%8, pid)
	o.fail(`Traceback (most recent call last):
  File "/srv/warp/.venv/bin/torchrun", line 8, in <module>
    sys.exit(main())
  File "/srv/warp/.venv/lib/python3.11/site-packages/torch/distributed/elastic/multiprocessing/errors/__init__.py", line 355, in wrapper
    return f(*args, **kwargs)
  File "/srv/warp/.venv/lib/python3.11/site-packages/torch/distributed/run.py", line 919, in main
    run(args)
  File "/srv/warp/.venv/lib/python3.11/site-packages/torch/distributed/run.py", line 910, in run
    elastic_launch(
  File "/srv/warp/.venv/lib/python3.11/site-packages/torch/distributed/launcher/api.py", line 138, in __call__
    return launch_agent(self._config, self._entrypoint, list(args))
  File "/srv/warp/.venv/lib/python3.11/site-packages/torch/distributed/launcher/api.py", line 269, in launch_agent
    raise ChildFailedError(
torch.distributed.elastic.multiprocessing.errors.ChildFailedError: 
============================================================
warp/train/trainer_ddp.py FAILED
------------------------------------------------------------
Failures:
  <NO_OTHER_FAILURES>
------------------------------------------------------------
Root Cause (first observed failure):
[0]:`)
	o.failf("  time      : %s", t.Format("2006-01-02_15:04:05"))
	o.failf("  host      : %s", host)
	o.failf("  rank      : %d (local_rank: %d)", rank, rank%8)
	o.failf("  exitcode  : %s (pid: %d)", code, pid)
	o.fail("  error_file: <N/A>")
	o.failf("  traceback : Signal %s (%s) received by PID %d", code[1:], sig, pid)
	o.fail("============================================================")
	o.failf("srun: error: %s: task 0: Exited with exit code 1", host)
}

func (g *gen) taskPretrain() {
	model := g.pick("pt-7b", "pt-3b", "pt-13b", "lm-1b4", "moe-8x2b")
	job := model + "-ddp"
	nodes := g.pickI(4, 8, 16)
	stepK := g.n(60, 180)
	gb := g.pick("1024", "2048", "512")
	sbatch := "ops/slurm/pretrain_" + model + ".sbatch"

	var b strings.Builder
	switch g.r.IntN(3) {
	case 0:
		fmt.Fprintf(&b, "Last night's %s pretrain on the h100 partition died somewhere past step %dk. Get it running again from the last good checkpoint. Keep the global batch at %s sequences and don't touch the data mix.", model, stepK, gb)
	case 1:
		fmt.Fprintf(&b, "The %s run fell over overnight (around %dk steps). Please resume it from the newest checkpoint that isn't corrupt. Constraints: global batch stays %s, same data mix, and don't grab more than %d nodes.", model, stepK, gb, nodes)
	default:
		fmt.Fprintf(&b, "Can you get %s training again? It crashed after ~%dk steps last night. Resume, don't restart from scratch; global batch %s is fixed by the LR schedule, so keep it.", model, stepK, gb)
	}
	if g.chance(0.6) {
		fmt.Fprintf(&b, " Ticket is %s.", g.U("id", g.mkTicket()))
	}
	if g.chance(0.5) {
		fmt.Fprintf(&b, "\n\nHardware channel had this at 03:10, might be related:\n```\ngpu-healthcheck run %s: 1 node drained, details %s\n```",
			g.U("uuid", g.mkUUID()), g.U("url", func() string { return "https://grafana.loomfield.net/d/" + g.chars(lowan, 9) + "/gpu-fleet?orgId=1" }))
	}
	g.user(b.String())

	first := g.n(101, 860)
	hosts := make([]string, nodes)
	for i := range hosts {
		hosts[i] = g.reg(fmt.Sprintf("wh100-%04d", first+i))
	}
	follow := g.A(g.mkJob())
	bad := g.r.IntN(nodes)
	badHost := hosts[bad]
	logPath := fmt.Sprintf("logs/%s-%s.out", job, follow)

	g.turn("Looking at the accounting records and the log directory first.",
		g.bash(`sacct -u warp-svc -S now-3days --format=JobID,JobName,Partition,Account,State,ExitCode,Elapsed,NodeList -X -D`, func(o *out) {
			g.sacctTable(o, follow, job, hosts[0], nodes)
		}),
		g.bash("ls -lt logs/ | head -n 25", func(o *out) {
			o.addf("total %d", g.n(2000, 90000))
			t := g.now
			for i := 0; i < 24; i++ {
				name := fmt.Sprintf("%s-%s.out", g.pickN(jobNames), g.A(g.mkJob()))
				if i == 1 {
					name = fmt.Sprintf("%s-%s.out", job, follow)
				}
				t = t.Add(-time.Duration(g.n(5, 400)) * time.Minute)
				o.addf("-rw-r--r-- 1 warp-svc warp %9d %s %s", g.n(2000, 9900000), t.Format("Jan _2 15:04"), name)
			}
		}))

	crash := g.pick("nccl", "nccl", "oom")
	var frame string
	g.turn("The run ended with the node failure on its allocation. Reading the tail of its log.",
		g.bash("tail -n 1500 "+logPath, func(o *out) {
			rl := g.newRankLog(o, hosts, stepK*1000, model)
			rank := bad*8 + g.n(0, 7)
			var blocks []at
			switch crash {
			case "nccl":
				seq := g.E("id", func() string { return fmt.Sprintf("SeqNum=%d", g.n(20000, 99999)) })
				blocks = append(blocks, at{0.55 + 0.3*g.r.Float64(), func() { rl.ncclTimeout(rank, seq) }})
				if g.chance(0.5) {
					other := (rank + 8) % (nodes * 8)
					blocks = append(blocks, at{0.9, func() { rl.ncclTimeout(other, "SeqNum="+itoa(atoi(seq)+g.n(0, 1))) }})
				}
			default:
				frame = g.E("site", g.mkPySite("attn_block.py"))
				blocks = append(blocks, at{0.6 + 0.3*g.r.Float64(), func() { rl.oom(rank, frame) }})
			}
			o.fill(o.budget(1.6), rl.line, blocks...)
			sig := map[string]string{"nccl": "SIGABRT", "oom": "SIGKILL"}[crash]
			rl.elasticFailure(rank, badHost, sig)
		}))

	g.turn("One rank on "+badHost+" went first. Checking what SLURM recorded for that node.",
		g.bash("scontrol show node "+badHost, func(o *out) {
			gpu := "GPU-" + g.E("uuid", g.mkUUID())
			o.addf("NodeName=%s Arch=x86_64 CoresPerSocket=48", badHost)
			o.addf("   CPUAlloc=0 CPUEfctv=192 CPUTot=192 CPULoad=%s", g.f(0, 2, 2))
			o.add("   AvailableFeatures=h100,ib400,nvlink\n   ActiveFeatures=h100,ib400,nvlink\n   Gres=gpu:h100:8(S:0-1)")
			o.addf("   NodeAddr=%s NodeHostName=%s Version=23.11.6", badHost, badHost)
			o.add("   OS=Linux 5.14.0-427.22.1.el9_4.x86_64 #1 SMP PREEMPT_DYNAMIC\n   RealMemory=2063000 AllocMem=0 FreeMem=1998112 Sockets=2 Boards=1")
			o.fail("   State=DOWN+DRAIN+NOT_RESPONDING ThreadsPerCore=2 TmpDisk=0 Weight=1 Owner=N/A MCS_label=N/A")
			o.add("   Partitions=h100")
			o.addf("   BootTime=%s SlurmdStartTime=%s", stamp(g.ago(300*time.Hour)), stamp(g.ago(299*time.Hour)))
			o.addf("   LastBusyTime=%s ResumeAfterTime=None", stamp(g.ago(7*time.Hour)))
			o.add("   CfgTRES=cpu=192,mem=2063000M,billing=192,gres/gpu=8\n   AllocTRES=\n   CapWatts=n/a\n   CurrentWatts=0 AveWatts=0\n   ExtSensorsJoules=n/a ExtSensorsWatts=0 ExtSensorsTemp=n/a")
			o.failf("   Reason=gpu-healthcheck: %s Xid 79 (GPU has fallen off the bus) [root@%s]", gpu, stamp(g.ago(6*time.Hour)))
		}),
		g.readFile(sbatch, func(o *out) {
			o.add("#!/bin/bash")
			o.addf("#SBATCH --job-name=%s\n#SBATCH --partition=h100\n#SBATCH --nodes=%d\n#SBATCH --ntasks-per-node=1\n#SBATCH --gpus-per-node=8\n#SBATCH --cpus-per-task=96\n#SBATCH --mem=0\n#SBATCH --time=48:00:00\n#SBATCH --output=logs/%%x-%%j.out\n#SBATCH --signal=B:USR1@600\n#SBATCH --requeue", job, nodes)
			o.add("\nset -euo pipefail\nmodule load cuda/12.4 nccl/2.21.5 openmpi/4.1.6\nsource /srv/warp/.venv/bin/activate\n")
			o.add("export NCCL_IB_HCA=mlx5_0,mlx5_3,mlx5_4,mlx5_5\nexport NCCL_SOCKET_IFNAME=ib0\nexport NCCL_DEBUG=INFO\nexport TORCH_NCCL_ASYNC_ERROR_HANDLING=1\nexport OMP_NUM_THREADS=12\nexport WANDB_PROJECT=warp-pretrain")
			o.addf("export WARP_DATA_MANIFEST=%s", g.P("url", func() string { return "s3://warp-data/mix/" + g.hex(16) + "/manifest.json" }))
			o.add("\nhead_node=$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | head -n 1)\nhead_ip=$(srun --nodes=1 --ntasks=1 -w \"$head_node\" hostname --ip-address)\n")
			o.addf("srun torchrun \\\n  --nnodes \"$SLURM_NNODES\" \\\n  --nproc_per_node 8 \\\n  --rdzv_id \"$SLURM_JOB_ID\" \\\n  --rdzv_backend c10d \\\n  --rdzv_endpoint \"$head_ip:29500\" \\\n  warp/train/trainer_ddp.py \\\n    --config configs/pretrain/%s.yaml \\\n    --global-batch %s \\\n    --micro-batch 4 \\\n    --resume auto", model, gb)
		}))

	g.say(fmt.Sprintf("%s is drained by the GPU healthcheck, and the job died on it. Two ways forward: exclude that node and resume on %d healthy nodes with the same micro-batch, or wait for the hardware team. Do you want me to resubmit now with the node excluded?", badHost, nodes))
	var ans strings.Builder
	ans.WriteString(g.pick("Resubmit now with it excluded.", "Yes, exclude it and resume.", "Go ahead and exclude that node."))
	if crash == "oom" {
		ans.WriteString(" Also turn on activation checkpointing for the attention blocks instead of shrinking the micro-batch.")
	} else {
		ans.WriteString(" Bump the NCCL timeout while you're at it, but keep async error handling on.")
	}
	if g.chance(0.4) {
		fmt.Fprintf(&ans, " Hardware's tracking the node in %s.", g.U("id", func() string { return fmt.Sprintf("INC-%d", g.n(20000, 89999)) }))
	}
	g.user(ans.String())

	tag := g.W("id", func() string { return model + "-r" + g.hex(8) })
	over := g.W("path", func() string { return fmt.Sprintf("configs/overrides/%s-resume-%s.yaml", model, g.hex(6)) })
	key := g.W("key", func() string { return strings.Join(g.words(keyWords, 2), "_") + "_" + g.pickN(keyUnits) })
	ovr := fmt.Sprintf("# resume after %s drain\nresume:\n  from: latest_valid\n  verify_shards: true\ntrainer:\n  global_batch: %s\n  micro_batch: 4\n  %s: %d\n", badHost, gb, key, g.n(2, 64))
	if crash == "oom" {
		ovr += "model:\n  activation_checkpointing: attention\n"
	} else {
		ovr += "dist:\n  nccl_timeout_s: 1800\n"
	}
	g.turn("Adding a resume override and excluding the node in the batch script.",
		g.writeFile(over, ovr),
		g.replace(sbatch, "export NCCL_DEBUG=INFO", fmt.Sprintf("export NCCL_DEBUG=INFO\nexport WARP_RESUME_TAG=%s\n#SBATCH --exclude=%s", tag, badHost)),
		g.replace(sbatch, "    --resume auto", "    --resume auto \\\n    --override "+over))

	newJob := g.P("id", g.mkJob())
	g.turn("Submitting.",
		g.bash("sbatch --exclude="+badHost+" "+sbatch, func(o *out) {
			o.addf("Submitted batch job %s", newJob)
		}))
	g.turn("",
		g.bash(`squeue --me -o "%.10i %.9P %.20j %.8u %.8T %.10M %.6D %R"`, func(o *out) {
			o.add("     JOBID PARTITION                 NAME     USER    STATE       TIME  NODES NODELIST(REASON)")
			o.addf("%10s %9s %20s %8s %8s %10s %6d %s", newJob, "h100", job, "warp-svc", "RUNNING", "0:41", nodes, fmt.Sprintf("wh100-[%04d-%04d]", first+nodes+g.n(2, 30), first+2*nodes+g.n(31, 40)))
			for range g.n(3, 9) {
				st := g.pick("RUNNING", "PENDING", "RUNNING")
				reason := fmt.Sprintf("wa100-%04d", g.n(101, 899))
				if st == "PENDING" {
					reason = g.pick("(Priority)", "(Resources)", "(ReqNodeNotAvail, Reserved for maintenance)", "(QOSMaxGRESPerUser)")
				}
				o.addf("%10s %9s %20s %8s %8s %10s %6d %s", g.A(g.mkJob()), g.pick("a100", "cpu", "h100"), g.pickN(jobNames), "warp-svc", st, fmt.Sprintf("%d:%02d:%02d", g.n(0, 30), g.n(0, 59), g.n(0, 59)), g.n(1, 4), reason)
			}
		}))

	second := crash == "nccl" && g.chance(0.45)
	g.now = g.now.Add(25 * time.Minute)
	g.turn("It's running. Waiting a bit and then checking the new log.",
		g.bash(fmt.Sprintf("sleep 900; tail -n 800 $(ls -t logs/%s-*.out | head -n 1)", job), func(o *out) {
			hs := make([]string, nodes)
			for i := range hs {
				hs[i] = fmt.Sprintf("wh100-%04d", first+nodes+i+3)
			}
			rl := g.newRankLog(o, hs, (stepK-2)*1000, model)
			var blocks []at
			blocks = append(blocks, at{0.05, func() {
				o.addf("[rank0]: resuming from /lus/warp/ckpt/%s/step_%08d (verified %d/%d shards)", model, (stepK-2)*1000, 64, 64)
			}}, at{0.1 + 0.3*g.r.Float64(), func() {
				o.addf("wandb: 🚀 View run at %s", g.P("url", func() string { return "https://wandb.ai/loomfield/warp-pretrain/runs/" + g.chars(lowan, 8) }))
			}}, at{0.3 + 0.5*g.r.Float64(), func() {
				o.addf("[rank0]: checkpoint manifest sha256:%s written", g.P("hash", g.mkHex(24)))
			}})
			if second {
				frame = g.E("site", g.mkPySite("attn_block.py"))
				blocks = append(blocks, at{0.7 + 0.2*g.r.Float64(), func() { rl.oom(g.n(0, nodes*8-1), frame) }})
			}
			o.fill(o.budget(1.2), rl.line, blocks...)
		}))

	if second {
		g.say("The NCCL timeout is gone, but one rank now runs out of memory in the attention block after the longer-sequence shards come in. Per your constraint I won't shrink the micro-batch; switching on activation checkpointing for attention and resubmitting.")
		g.turn("",
			g.replace(over, "dist:\n  nccl_timeout_s: 1800\n", "dist:\n  nccl_timeout_s: 1800\nmodel:\n  activation_checkpointing: attention\n"),
			g.bash("scancel --name="+job+" --me && sbatch --exclude="+badHost+" "+sbatch, func(o *out) {
				o.addf("Submitted batch job %s", g.P("id", g.mkJob()))
			}))
		g.turn("",
			g.bash(fmt.Sprintf("sleep 1200; tail -n 300 $(ls -t logs/%s-*.out | head -n 1)", job), func(o *out) {
				rl := g.newRankLog(o, hosts[:1], (stepK-2)*1000, model)
				o.fill(o.budget(0.7), rl.line)
			}))
	}

	g.turn("Training is progressing past the resume point. Running the training unit tests to make sure the override parses.",
		g.bash("python -m pytest tests/train -q --durations=8", func(o *out) {
			g.pytestPass(o, "tests/train", 1.0)
		}))
	g.say(fmt.Sprintf("The run is back up from the last verified checkpoint with the drained node excluded; global batch is still %s and the data mix is untouched. The override lives in %s.", gb, over))
}

// pytestPass writes a passing verbose pytest run with slowest durations.
func (g *gen) pytestPass(o *out, dir string, w float64) {
	n := o.budget(w)
	total := max(20, n/26)
	o.add("============================= test session starts ==============================")
	o.addf("platform linux -- Python 3.11.9, pytest-8.2.2, pluggy-1.5.0 -- /srv/warp/.venv/bin/python\ncachedir: .pytest_cache\nrootdir: /srv/warp\nconfigfile: pyproject.toml\nplugins: xdist-3.6.1, timeout-2.3.1, anyio-4.4.0\ncollecting ... collected %d items\n", total)
	type tc struct{ file, name string }
	var slow []tc
	labAt := map[int]bool{g.r.IntN(total): true, g.r.IntN(total): true}
	file := ""
	for i := range total {
		if i == 0 || g.chance(0.12) {
			file = fmt.Sprintf("%s/test_%s.py", dir, strings.Join(g.words(pyWords, 2), "_"))
		}
		var name string
		if labAt[i] {
			name = g.P("test", g.mkTest("test_", "_", pyWords, 3))
			slow = append(slow, tc{file, name})
		} else {
			name = g.A(g.mkTest("test_", "_", pyWords, 3))
			if len(slow) < 6 && g.chance(0.03) {
				slow = append(slow, tc{file, name})
			}
		}
		param := ""
		if g.chance(0.2) {
			param = fmt.Sprintf("[%s-%d]", g.pick("bf16", "fp32", "fp16"), g.pickI(1, 2, 4, 8))
		}
		o.addf("%s::%s%s PASSED%s[%3d%%]", file, name, param, strings.Repeat(" ", max(1, 20-len(param))), (i+1)*100/total)
	}
	o.addf("\n============================= slowest %d durations ==============================", len(slow))
	for i, s := range slow {
		o.addf("%ss call     %s::%s", g.f(float64(20-2*i), float64(22-2*i), 2), s.file, s.name)
	}
	o.addf("============================ %d passed in %ss =============================", total, g.f(30, 200, 2))
}

func (g *gen) taskTune() {
	exp := fmt.Sprintf("warp_%s_sweep_%s", g.pick("lr", "sft", "rm", "dpo"), g.now.Format("0102"))
	script := "tune/" + g.pick("sweep_sft.py", "sweep_rm.py", "sweep_lora.py")
	trials := g.pickI(16, 24, 32)
	var b strings.Builder
	fmt.Fprintf(&b, "Run the LR/warmup sweep (%s) on the Ray cluster: %d trials, 1 GPU each, ASHA scheduler as configured. Don't raise the GPU count, the cluster is shared.", script, trials)
	if g.chance(0.6) {
		fmt.Fprintf(&b, " Background is in %s.", g.U("url", func() string { return fmt.Sprintf("https://github.com/loomfield/warp/issues/%d", g.n(1000, 9999)) }))
	}
	g.user(b.String())

	trialHex := g.A(g.mkHex(5))
	g.turn("Checking the sweep script and the cluster first.",
		g.readFile(script, func(o *out) { g.pySource(o, 0.35, "tune") }),
		g.bash("ray status", func(o *out) {
			o.add("======== Autoscaler status: " + g.now.Format("2006-01-02 15:04:05.000000") + " ========")
			o.add("Node status\n---------------------------------------------------------------\nActive:")
			for range g.n(3, 6) {
				o.addf(" 1 node_%s", g.A(g.mkHex(56)))
			}
			o.add("Pending:\n (no pending nodes)\nRecent failures:\n (no failures)\n\nResources\n---------------------------------------------------------------\nUsage:")
			o.addf(" 0.0/%d.0 CPU\n 0.0/8.0 GPU\n 0B/%s.00GiB memory\n 0B/%s.00GiB object_store_memory", 8*g.n(24, 32), itoa(g.n(900, 1900)), itoa(g.n(200, 400)))
			o.add("\nDemands:\n (no resource demands)")
			o.addf("Cluster ID: %s", g.P("hash", g.mkHex(40)))
		}))

	nodeID := g.E("hash", g.mkHex(56))
	nodeIP := g.A(func() string { return fmt.Sprintf("10.42.%d.%d", g.n(1, 30), g.n(2, 250)) })
	actor := g.E("hash", g.mkHex(32))
	var errTrial string
	g.turn("Launching the sweep.",
		g.bash(fmt.Sprintf("python %s --num-samples %d --gpus-per-trial 1 2>&1 | tee /tmp/%s.log", script, trials, exp), func(o *out) {
			c := g.clockFrom(40 * time.Minute)
			o.add("╭──────────────────────────────────────────────────────────────╮")
			o.addf("│ Configuration for experiment     %-28s│", exp)
			o.add("├──────────────────────────────────────────────────────────────┤")
			o.add("│ Search algorithm                 BasicVariantGenerator       │")
			o.add("│ Scheduler                        AsyncHyperBandScheduler     │")
			o.addf("│ Number of trials                 %-28d│", trials)
			o.add("╰──────────────────────────────────────────────────────────────╯")
			o.addf("\nView detailed results here: /lus/warp/ray_results/%s", exp)
			o.addf("To visualize your results with TensorBoard, run: `tensorboard --logdir /tmp/ray/session_%s/artifacts/%s/driver_artifacts`\n", c.t.Format("2006-01-02_15-04-05"), exp)
			errored := map[int]bool{}
			for len(errored) < g.n(2, 4) {
				errored[g.r.IntN(trials)] = true
			}
			it := 0
			status := func() {
				it++
				t := c.tick(90000)
				o.addf("Trial status: %d RUNNING | %d TERMINATED | %d PENDING", 8, it, max(0, trials-8-it))
				o.addf("Current time: %s. Total running time: %dmin %ds", t.Format("2006-01-02 15:04:05"), it*2, g.n(0, 59))
				o.add("Logical resource usage: 64.0/256 CPUs, 8.0/8 GPUs (0.0/1.0 accelerator_type:H100)")
				o.add("╭────────────────────────────────────────────────────────────────────────────────────╮")
				o.add("│ Trial name                status         lr     warmup     iter     total time (s)     loss │")
				o.add("├────────────────────────────────────────────────────────────────────────────────────┤")
				for i := range min(trials, 8+it) {
					st := "RUNNING"
					if i < it {
						st = "TERMINATED"
					}
					line := fmt.Sprintf("│ train_fn_%s_%05d   %-10s  %.2e   %6d   %6d   %16s   %s │", trialHex, i, st, 1e-5*float64(1+g.r.IntN(90)), 100*g.n(1, 20), g.n(1, 30), g.f(30, 3000, 2), g.f(1.1, 2.9, 4))
					if errored[i] && i < it {
						line = fmt.Sprintf("│ train_fn_%s_%05d   %-10s  %.2e   %6d   %6d   %16s          │", trialHex, i, "ERROR", 1e-5*float64(1+g.r.IntN(90)), 100*g.n(1, 20), g.n(1, 3), g.f(30, 300, 2))
						o.fail(line)
						continue
					}
					o.add(line)
				}
				o.add("╰────────────────────────────────────────────────────────────────────────────────────╯\n")
			}
			failNote := func(i int) {
				t := c.tick(20000)
				errTrial = fmt.Sprintf("train_fn_%s_%05d", trialHex, i)
				o.failf("Trial %s errored after %d iterations at %s. Total running time: %dmin %ds", errTrial, g.n(1, 3), t.Format("2006-01-02 15:04:05"), it*2, g.n(0, 59))
				o.failf("Error file: /lus/warp/ray_results/%s/%s_%d_lr=%s,warmup=%d_%s/error.txt", exp, errTrial, i, g.f(0.0001, 0.002, 4), 100*g.n(1, 20), t.Format("2006-01-02_15-04-05"))
			}
			result := func() {
				t := c.tick(30000)
				o.addf("Trial train_fn_%s_%05d finished iteration %d at %s. Total running time: %dmin %ds", trialHex, g.r.IntN(trials), g.n(1, 30), t.Format("2006-01-02 15:04:05"), it*2, g.n(0, 59))
				o.add("╭──────────────────────────────────────────────╮")
				o.add("│ Trial train_fn result                        │")
				o.add("├──────────────────────────────────────────────┤")
				o.addf("│ checkpoint_dir_name                          │\n│ time_this_iter_s                     %8s │\n│ time_total_s                         %8s │\n│ training_iteration                   %8d │\n│ eval_loss                            %8s │\n│ loss                                 %8s │\n│ tokens_per_s                         %8s │",
					g.f(10, 200, 3), g.f(100, 3000, 2), g.n(1, 30), g.f(1.2, 2.5, 4), g.f(1.1, 2.5, 4), g.f(9000, 40000, 0))
				o.add("╰──────────────────────────────────────────────╯")
			}
			var blocks []at
			k := 0
			for i := range trials {
				if errored[i] {
					j := i
					f := 0.15 + 0.6*float64(k)/float64(len(errored))
					blocks = append(blocks, at{f, func() { failNote(j) }})
					k++
				}
			}
			o.fill(o.budget(1.8), func() {
				if g.chance(0.3) {
					status()
				} else {
					result()
				}
			}, blocks...)
			o.addf("\nNumber of errored trials: %d", len(errored))
			o.add("╭─────────────────────────────────────────────────────────────────────────╮")
			o.add("│ Trial name                  # failures   error file                     │")
			o.add("├─────────────────────────────────────────────────────────────────────────┤")
			for i := range trials {
				if errored[i] {
					o.failf("│ train_fn_%s_%05d                1   /lus/warp/ray_results/%s/train_fn_%s_%05d.../error.txt │", trialHex, i, exp, trialHex, i)
				}
			}
			o.add("╰─────────────────────────────────────────────────────────────────────────╯")
			o.fail("Traceback (most recent call last):")
			o.failf(`  File "/srv/warp/%s, in <module>`, g.A(g.mkPySite(script)))
			o.fail("    results = tuner.fit()")
			o.fail(`  File "/srv/warp/.venv/lib/python3.11/site-packages/ray/tune/tuner.py", line 377, in fit`)
			o.fail("    return self._local_tuner.fit()")
			o.fail(`  File "/srv/warp/.venv/lib/python3.11/site-packages/ray/tune/impl/tuner_internal.py", line 476, in fit`)
			o.fail("    analysis = self._fit_internal(trainable, param_space)")
			o.failf("ray.tune.error.TuneError: ('Trials did not complete', [%s])", errTrial)
			o.exitLine(1)
		}))

	g.turn("Some trials errored. Reading one error file and the raylet log on that node.",
		g.readFile(fmt.Sprintf("/lus/warp/ray_results/%s/%s/error.txt", exp, errTrial), func(o *out) {
			o.failf("Failure # 1 (occurred at %s)", g.ago(30*time.Minute).Format("2006-01-02_15-04-05"))
			o.failf("ray::ImplicitFunc.train() (pid=%d, ip=%s, actor_id=%s, repr=train_fn)", g.n(20000, 90000), nodeIP, actor)
			o.fail(`  File "/srv/warp/.venv/lib/python3.11/site-packages/ray/tune/trainable/trainable.py", line 331, in train
    raise skipped from exception_cause(skipped)
  File "/srv/warp/.venv/lib/python3.11/site-packages/ray/air/_internal/util.py", line 98, in run
    self._ret = self._target(*self._args, **self._kwargs)`)
			o.failf(`  File "/srv/warp/%s, in train_fn`, g.A(g.mkPySite(script)))
			o.fail("    trainer.train()")
			o.failf("ray.exceptions.OutOfMemoryError: Task was killed due to the node running low on memory.\nMemory on the node (IP: %s, ID: %s) where the task (actor ID: %s, name=ImplicitFunc.__init__, pid=%d, memory used=%sGB) was running was %sGB / %sGB (0.95), which exceeds the memory usage threshold of 0.95. Ray killed this worker (ID: %s) because it was the most recently scheduled task.",
				nodeIP, nodeID, actor, g.n(20000, 90000), g.f(40, 90, 2), g.f(480, 500, 2), g.f(500, 510, 2), g.hex(56))
			o.failf("To see more information about memory usage on this node, use `ray logs raylet.out -ip %s`. To see the logs of the worker, use `ray logs worker-%s*out -ip %s. Top 10 memory users:", nodeIP, g.hex(56), nodeIP)
			o.fail("PID\tMEM(GB)\tCOMMAND")
			for range 6 {
				o.failf("%d\t%s\tray::ImplicitFunc.train", g.n(20000, 90000), g.f(20, 90, 2))
			}
		}),
		g.bash("ray logs raylet.out --node-ip "+nodeIP+" --tail 600", func(o *out) {
			c := g.clockFrom(50 * time.Minute)
			o.fill(o.budget(0.9), func() {
				t := c.tick(8000)
				o.addf("[%s,%03d I %d %d] %s", t.Format("2006-01-02 15:04:05"), g.n(0, 999), g.n(100, 900), g.n(100, 900), g.pick(
					fmt.Sprintf("(raylet) node_manager.cc:%d: Disconnecting client, graceful=true, disconnect_type=%d", 1400+g.r.IntN(200), g.n(0, 3)),
					fmt.Sprintf("(raylet) worker_pool.cc:%d: Started worker process with pid %d, the token is %d", 500+g.r.IntN(50), g.n(20000, 90000), g.n(1, 500)),
					fmt.Sprintf("(raylet) memory_monitor.cc:%d: Node memory usage %s%% (threshold 95%%)", 160+g.r.IntN(20), g.f(60, 94, 2)),
					fmt.Sprintf("(raylet) local_task_manager.cc:%d: Queued task ImplicitFunc.train, %d tasks in queue", 300+g.r.IntN(30), g.n(0, 8)),
				))
			}, at{0.4 + 0.4*g.r.Float64(), func() {
				t := c.tick(1000)
				o.failf("[%s,%03d W %d %d] (raylet) node_manager.cc:3116: 2 Workers (tasks / actors) killed due to memory pressure (OOM), 0 Workers crashed due to other reasons at node (ID: %s, IP: %s) over the last time period.", t.Format("2006-01-02 15:04:05"), g.n(0, 999), g.n(100, 900), g.n(100, 900), nodeID, nodeIP)
				o.failf("[%s,%03d W %d %d] (raylet) memory_monitor.cc:201: Killing worker with task ImplicitFunc.train, actor %s: used 0.9512 of node memory", t.Format("2006-01-02 15:04:05"), g.n(0, 999), g.n(100, 900), g.n(100, 900), actor)
			}})
		}))

	key := g.W("key", func() string { return strings.ToUpper(strings.Join(g.words(keyWords, 2), "_")) + "_GB" })
	g.say("The trials weren't failing on the GPU: Ray's memory monitor killed them because each trial's dataloader workers took too much host RAM. I'll set a memory reservation per trial so Ray stops packing more trials onto a node than its RAM holds. The GPU count stays at 1 per trial.")
	g.turn("",
		g.replace(script, `resources_per_trial={"cpu": 8, "gpu": 1}`, fmt.Sprintf("resources_per_trial={\"cpu\": 8, \"gpu\": 1, \"memory\": %s * 1024**3}", key)),
		g.replace(script, "import ray\n", fmt.Sprintf("import ray\n\n%s = %d  # host RAM per trial, dataloader workers included\n", key, g.n(48, 96))))
	g.turn("Rerunning the sweep.",
		g.bash(fmt.Sprintf("python %s --num-samples %d --gpus-per-trial 1 2>&1 | tail -n 400", script, trials), func(o *out) {
			c := g.clockFrom(60 * time.Minute)
			hex2 := g.A(g.mkHex(5))
			o.fill(o.budget(1.2), func() {
				t := c.tick(30000)
				o.addf("Trial train_fn_%s_%05d finished iteration %d at %s. Total running time: %dmin %ds", hex2, g.r.IntN(trials), g.n(1, 30), t.Format("2006-01-02 15:04:05"), g.n(10, 59), g.n(0, 59))
				o.addf("  eval_loss=%s loss=%s tokens_per_s=%s time_total_s=%s", g.f(1.2, 2.5, 4), g.f(1.1, 2.5, 4), g.f(9000, 40000, 0), g.f(100, 3000, 2))
			}, at{0.9, func() {
				o.addf("\nTrial status: %d TERMINATED\nTotal running time: %dmin %ds", trials, g.n(40, 90), g.n(0, 59))
				o.addf("Best trial config: {'lr': %s, 'warmup': %d}", g.f(0.0001, 0.0009, 5), 100*g.n(2, 20))
				o.addf("Best trial checkpoint: /lus/warp/ray_results/%s/train_fn_%s/checkpoint_000011", exp, g.P("id", func() string { return hex2 + fmt.Sprintf("_%05d", g.r.IntN(trials)) }))
				o.addf("Best eval_loss: %s", g.f(1.2, 1.6, 4))
			}})
		}))
	g.say(fmt.Sprintf("Sweep finished with all %d trials terminated and none killed. Each trial now reserves host RAM alongside its single GPU, so Ray no longer overpacks nodes.", trials))
}

// pySource writes a Python module as a read shows it.
func (g *gen) pySource(o *out, w float64, pkg string) {
	o.add(`"""` + g.pick("Sweep driver for Ray Tune.", "Distributed training entry point.", "Shard loading and packing.") + `"""`)
	o.add("from __future__ import annotations\n\nimport argparse\nimport os\n\nimport ray\nfrom ray import tune\nfrom ray.tune.schedulers import ASHAScheduler\n\nfrom warp.train import trainer_ddp\nfrom warp.train.lr_sched import cosine_with_warmup\n")
	fn := 0
	o.fill(o.budget(w), func() {
		fn++
		name := strings.Join(g.words(pyWords, 2), "_")
		o.addf("\ndef %s_%d(cfg: dict, step: int) -> float:", name, fn)
		o.addf("    \"\"\"%s\"\"\"", g.pick("Return the scheduled value for this step.", "Scale by world size.", "Clamp to the configured window."))
		for range g.n(3, 9) {
			o.addf("    %s", g.pick(
				fmt.Sprintf("x = cfg.get(%q, %s)", g.pickN(pyWords), g.f(0, 1, 3)),
				fmt.Sprintf("if step < cfg[%q]:", g.pickN(pyWords)),
				"    return 0.0",
				fmt.Sprintf("x *= min(1.0, step / max(1, cfg[%q]))", g.pickN(pyWords)),
				"world = int(os.environ.get(\"WORLD_SIZE\", \"1\"))",
				fmt.Sprintf("x = x / world if cfg.get(%q) else x", g.pickN(pyWords)),
			))
		}
		o.add("    return x")
	})
	if pkg == "tune" {
		o.add("\n\ndef main() -> None:\n    ap = argparse.ArgumentParser()\n    ap.add_argument(\"--num-samples\", type=int, default=16)\n    ap.add_argument(\"--gpus-per-trial\", type=int, default=1)\n    args = ap.parse_args()\n    ray.init(address=\"auto\")\n    tuner = tune.Tuner(\n        tune.with_resources(train_fn, resources_per_trial={\"cpu\": 8, \"gpu\": 1}),\n        tune_config=tune.TuneConfig(metric=\"eval_loss\", mode=\"min\", scheduler=ASHAScheduler(), num_samples=args.num_samples),\n        param_space={\"lr\": tune.loguniform(1e-5, 1e-3), \"warmup\": tune.choice([200, 500, 1000, 2000])},\n    )\n    results = tuner.fit()\n    print(results.get_best_result())\n\n\nif __name__ == \"__main__\":\n    main()")
	}
}

func (g *gen) taskTriton() {
	model := g.pick("ranker", "embedder", "reranker_xl", "safety_cls")
	ver := g.n(3, 9)
	var b strings.Builder
	fmt.Fprintf(&b, "%s v%d isn't serving on the staging Triton box. Get it to load. We're pinned to the 24.07 Triton image, don't bump it, and don't touch the other models in the repository.", model, ver)
	if g.chance(0.5) {
		fmt.Fprintf(&b, " The client team sees this:\n```\ntritonclient.utils.InferenceServerException: [StatusCode.UNAVAILABLE] Request for unknown model: '%s' version %d is not ready (req %s)\n```",
			model, ver, g.U("id", g.mkReq("cl-", 14)))
	}
	g.user(b.String())

	errSite := g.E("site", g.mkSite("model_lifecycle.cc"))
	cfg := fmt.Sprintf("serving/triton/model_repository/%s/config.pbtxt", model)
	g.turn("Pulling the server log.",
		g.bash("docker logs --tail 900 triton-warp 2>&1", func(o *out) {
			c := g.clockFrom(2 * time.Hour)
			others := []string{"embedder", "tokenizer_bpe", "ensemble_rank", "safety_cls", "ranker", "ctr_lite"}
			line := func() {
				t := c.tick(3000)
				o.addf("%s 1 %s] %s", glogTime("I", t), g.A(g.mkSite(g.pick("model_lifecycle.cc", "backend_model.cc", "onnxruntime.cc", "python_be.cc", "infer_handler.cc"))),
					g.pick(fmt.Sprintf("\"loading: %s:%d\"", g.pickN(others), g.n(1, 4)),
						fmt.Sprintf("\"TRITONBACKEND_ModelInstanceInitialize: %s_0_%d (GPU device %d)\"", g.pickN(others), g.n(0, 3), g.n(0, 1)),
						fmt.Sprintf("\"successfully loaded '%s'\"", g.pickN(others)),
						fmt.Sprintf("\"Process infer request: model=%s batch=%d queue_us=%d\"", g.pickN(others), g.n(1, 32), g.n(5, 900)),
						"\"Polling model repository\"",
						fmt.Sprintf("\"Optimized for ORT execution provider CUDA; arena extend %d MiB\"", g.n(64, 2048))))
			}
			fail := func() {
				t := c.tick(500)
				o.failf("%s 1 %s] \"failed to load '%s' version %d: Invalid argument: model '%s', tensor 'input_ids': the model expects 2 dimensions (shape [-1,%d]) but the model configuration specifies 2 dimensions (an initial batch dimension because max_batch_size > 0 followed by the explicit tensor shape, making complete shape [-1,-1,%d])\"",
					glogTime("E", t), errSite, model, ver, model, 256, 256)
			}
			o.add("=============================\n== Triton Inference Server ==\n=============================\n\nNVIDIA Release 24.07 (build 101814614)\nTriton Server Version 2.48.0\n")
			o.fill(o.budget(1.0), line, at{0.3 + 0.4*g.r.Float64(), fail})
			o.add("+------------------+---------+--------------------------------------------------------------------------+\n| Model            | Version | Status                                                                   |\n+------------------+---------+--------------------------------------------------------------------------+")
			for _, m := range others {
				if m != model {
					o.addf("| %-16s | %-7d | READY                                                                    |", m, g.n(1, 4))
				}
			}
			o.failf("| %-16s | %-7d | UNAVAILABLE: Invalid argument: model '%s', tensor 'input_ids': the model expects 2 dim... |", model, ver, model)
			o.add("+------------------+---------+--------------------------------------------------------------------------+")
			t := c.tick(100)
			o.addf("%s 1 grpc_server.cc:2466] \"Started GRPCInferenceService at 0.0.0.0:8001\"", glogTime("I", t))
			o.addf("%s 1 http_server.cc:4638] \"Started HTTPService at 0.0.0.0:8000\"", glogTime("I", t))
			o.addf("%s 1 http_server.cc:320] \"Started Metrics Service at 0.0.0.0:8002\"", glogTime("I", t))
		}),
		g.bash(fmt.Sprintf("curl -sv http://localhost:8000/v2/models/%s/versions/%d/ready", model, ver), func(o *out) {
			o.add("*   Trying 127.0.0.1:8000...\n* Connected to localhost (127.0.0.1) port 8000\n> GET /v2/models/" + model + "/versions/" + itoa(ver) + "/ready HTTP/1.1\n> Host: localhost:8000\n> User-Agent: curl/8.5.0\n> Accept: */*\n>")
			o.fail("< HTTP/1.1 400 Bad Request")
			o.add("< Content-Type: application/json\n< Content-Length: 0\n<\n* Connection #0 to host localhost left intact")
		}))

	smokeFails := g.chance(0.5)
	g.turn("The config declares input_ids with an extra dimension. Reading the model config and checking the ONNX graph.",
		g.readFile(cfg, func(o *out) {
			o.addf("name: \"%s\"\nbackend: \"onnxruntime\"\nmax_batch_size: 64\n", model)
			o.add("input [\n  {\n    name: \"input_ids\"\n    data_type: TYPE_INT64\n    dims: [ -1, 256 ]\n  },\n  {\n    name: \"attention_mask\"\n    data_type: TYPE_INT64\n    dims: [ -1, 256 ]\n  }\n]\noutput [\n  {\n    name: \"scores\"\n    data_type: TYPE_FP32\n    dims: [ 1 ]\n  }\n]")
			o.add("instance_group [\n  {\n    count: 2\n    kind: KIND_GPU\n    gpus: [ 0 ]\n  }\n]\ndynamic_batching {\n  preferred_batch_size: [ 16, 32 ]\n  max_queue_delay_microseconds: 500\n}")
			o.addf("parameters {\n  key: \"warp_export_rev\"\n  value: { string_value: \"%s\" }\n}", g.P("hash", g.mkHex(14)))
		}),
		g.bash(fmt.Sprintf("python -c \"import onnx; m = onnx.load('serving/triton/model_repository/%s/%d/model.onnx'); [print(i.name, [d.dim_param or d.dim_value for d in i.type.tensor_type.shape.dim]) for i in m.graph.input]; print(m.opset_import)\"", model, ver), func(o *out) {
			o.add("input_ids ['batch', 256]\nattention_mask ['batch', 256]")
			o.add("[domain: \"\"\nversion: 17\n, domain: \"com.microsoft\"\nversion: 1\n]")
		}))

	rev := g.W("hash", g.mkHex(16))
	g.turn("The graph takes [batch, 256] and Triton adds the batch dimension itself, so dims must be [ 256 ].",
		g.replace(cfg, "    name: \"input_ids\"\n    data_type: TYPE_INT64\n    dims: [ -1, 256 ]", "    name: \"input_ids\"\n    data_type: TYPE_INT64\n    dims: [ 256 ]"),
		g.replace(cfg, "    name: \"attention_mask\"\n    data_type: TYPE_INT64\n    dims: [ -1, 256 ]", "    name: \"attention_mask\"\n    data_type: TYPE_INT64\n    dims: [ 256 ]"),
		g.replace(cfg, "dynamic_batching {", fmt.Sprintf("parameters {\n  key: \"warp_config_rev\"\n  value: { string_value: \"%s\" }\n}\ndynamic_batching {", rev)))

	g.turn("Loading it through the repository API instead of restarting the server, so the other models stay up.",
		g.bash(fmt.Sprintf("curl -s -X POST localhost:8000/v2/repository/models/%s/load -w '%%{http_code}\\n' && sleep 5 && docker logs --since 1m triton-warp 2>&1 | tail -n 60", model), func(o *out) {
			o.add("200")
			c := g.clockFrom(time.Minute)
			for range g.n(8, 20) {
				t := c.tick(900)
				o.addf("%s 1 %s] \"%s\"", glogTime("I", t), g.A(g.mkSite("model_lifecycle.cc")), g.pick("loading: "+model+":"+itoa(ver), "TRITONBACKEND_ModelInstanceInitialize: "+model+"_0_0 (GPU device 0)", "Polling model repository"))
			}
			o.addf("%s 1 %s] \"successfully loaded '%s' version %d\"", glogTime("I", c.tick(100)), g.A(g.mkSite("model_lifecycle.cc")), model, ver)
		}))

	g.turn("Loaded. Benchmarking it over gRPC and running the client smoke test.",
		g.bash(fmt.Sprintf("perf_analyzer -m %s -b 8 --concurrency-range 1:16:1 -u localhost:8001 -i grpc --shape input_ids:256 --shape attention_mask:256", model), func(o *out) {
			o.add(" Successfully read data for 1 stream/streams with 1 step/steps.\n*** Measurement Settings ***\n  Batch size: 8\n  Service Kind: TRITON\n  Using \"time_windows\" mode for stabilization\n  Stabilizing using average latency and throughput\n  Measurement window: 5000 msec\n  Latency limit: 0 msec\n  Concurrency limit: 16 concurrent requests\n  Using synchronous calls for inference\n")
			conc := 0
			o.fill(o.budget(0.8), func() {
				conc++
				thr := 2700 + conc*g.n(100, 400)
				lat := 2900 + conc*g.n(150, 400)
				o.addf("Request concurrency: %d\n  Client: \n    Request count: %d\n    Throughput: %d.%02d infer/sec\n    Avg latency: %d usec (standard deviation %d usec)\n    p50 latency: %d usec\n    p90 latency: %d usec\n    p95 latency: %d usec\n    p99 latency: %d usec\n    Avg gRPC time: %d usec ((un)marshal request/response %d usec + response wait %d usec)",
					conc, thr/8*5, thr, g.n(0, 99), lat, g.n(100, 400), lat-g.n(10, 90), lat+g.n(200, 600), lat+g.n(600, 900), lat+g.n(900, 2400), lat-g.n(0, 50), g.n(20, 60), lat-g.n(100, 200))
				o.addf("  Server: \n    Inference count: %d\n    Execution count: %d\n    Successful request count: %d\n    Avg request latency: %d usec (overhead %d usec + queue %d usec + compute input %d usec + compute infer %d usec + compute output %d usec)\n",
					thr*5, thr*5/8, thr*5/8, lat-300, g.n(20, 60), g.n(30, 400), g.n(60, 120), lat-700, g.n(100, 200))
			})
			o.add("Inferences/Second vs. Client Average Batch Latency")
			for i := 1; i <= min(conc, 16); i++ {
				o.addf("Concurrency: %d, throughput: %d.%02d infer/sec, latency %d usec", i, 2700+i*g.n(100, 400), g.n(0, 99), 2900+i*g.n(150, 400))
			}
		}),
		g.bash("python serving/smoke_grpc.py --url localhost:8001 --model "+model+" --n 64", func(o *out) {
			if smokeFails {
				o.add("connecting to localhost:8001 (grpc, ssl=False)")
				for i := range g.n(3, 12) {
					o.addf("req %02d ok  scores[0]=%s  latency_ms=%s", i, g.f(-3, 3, 5), g.f(2, 9, 2))
				}
				o.failf("tritonclient.utils.InferenceServerException: [StatusCode.RESOURCE_EXHAUSTED] Received message larger than max (%d vs. 4194304) [%s]", g.n(4200000, 9000000), g.E("hash", g.mkHex(12)))
				o.exitLine(1)
				return
			}
			g.smokeOK(o)
		}))
	if smokeFails {
		g.say("The server side is fine; the smoke client's default gRPC receive limit (4 MiB) is smaller than a batch of 64 score vectors with the debug tensors on. Raising it in the client only.")
		g.turn("",
			g.replace("serving/smoke_grpc.py", "client = grpcclient.InferenceServerClient(url=args.url)", "client = grpcclient.InferenceServerClient(\n    url=args.url,\n    channel_args=[(\"grpc.max_receive_message_length\", 32 * 1024 * 1024)],\n)"),
			g.bash("python serving/smoke_grpc.py --url localhost:8001 --model "+model+" --n 64", g.smokeOK))
	}
	g.say(fmt.Sprintf("%s v%d is READY on the 24.07 image; only its config changed (dims without the batch dimension), loaded through the repository API so the other models never restarted.", model, ver))
}

func (g *gen) taskTracking() {
	exp := g.n(10, 40)
	var b strings.Builder
	fmt.Fprintf(&b, "Compare the recent fine-tune runs in MLflow experiment %d and in W&B (project warp-ft). Tell me which ones crashed and why, and tag the best finished one with warp.stage=candidate. Read-only otherwise, don't delete anything.", exp)
	if g.chance(0.5) {
		fmt.Fprintf(&b, " Eval numbers we need to beat are in %s.", g.U("url", func() string { return "https://docs.loomfield.net/warp/evals/" + g.chars(lowan, 10) }))
	}
	g.user(b.String())

	follow := g.A(g.mkHex(32))
	g.turn("Listing the runs in both trackers.",
		g.bash(fmt.Sprintf("mlflow runs list --experiment-id %d --view active_only", exp), func(o *out) {
			o.add("Date                     Name                      ID                                Status")
			o.add("-----------------------  ------------------------  --------------------------------  --------")
			t := g.now
			planted := 0
			pass := 0
			o.fill(o.budget(0.4), func() {
				t = t.Add(-time.Duration(g.n(20, 600)) * time.Minute)
				name := fmt.Sprintf("%s-%s-%s", g.pick("sft", "dpo", "rm", "lora"), g.pick("7b", "3b", "13b"), g.chars(lowers, 4))
				switch x := g.r.Float64(); {
				case x < 0.15:
					id := g.A(g.mkHex(32))
					if planted < 2 {
						id = g.E("hash", g.mkHex(32))
						planted++
					}
					o.failf("%s  %-24s  %s  FAILED", t.Format("2006-01-02 15:04:05"), name, id)
				case x < 0.2:
					o.failf("%s  %-24s  %s  KILLED", t.Format("2006-01-02 15:04:05"), name, g.A(g.mkHex(32)))
				default:
					id := g.A(g.mkHex(32))
					if pass < 1 && g.chance(0.2) {
						id = g.P("hash", g.mkHex(32))
						pass++
					}
					o.addf("%s  %-24s  %s  FINISHED", t.Format("2006-01-02 15:04:05"), name, id)
				}
			}, at{0.1, func() {
				t = t.Add(-time.Duration(g.n(20, 600)) * time.Minute)
				o.failf("%s  %-24s  %s  FAILED", t.Format("2006-01-02 15:04:05"), "sft-7b-"+g.chars(lowers, 4), follow)
			}})
		}),
		g.bash("python scripts/wandb_runs.py --project loomfield/warp-ft --last 40 --fields id,name,state,runtime,summary.eval_loss", func(o *out) {
			o.add("id        name                         state      runtime   eval_loss")
			planted := 0
			o.fill(o.budget(0.4), func() {
				name := fmt.Sprintf("%s-%s", g.pick("sft", "dpo", "rm"), g.chars(lowan, 6))
				switch x := g.r.Float64(); {
				case x < 0.15:
					id := g.A(func() string { return g.chars(lowan, 8) })
					if planted < 2 {
						id = g.E("id", func() string { return g.chars(lowan, 8) })
						planted++
					}
					o.failf("%-8s  %-27s  %-9s  %7ds  -", id, name, "crashed", g.n(60, 9000))
				case x < 0.25:
					o.addf("%-8s  %-27s  %-9s  %7ds  -", g.A(func() string { return g.chars(lowan, 8) }), name, "running", g.n(60, 9000))
				default:
					o.addf("%-8s  %-27s  %-9s  %7ds  %s", g.A(func() string { return g.chars(lowan, 8) }), name, "finished", g.n(3000, 90000), g.f(1.1, 1.9, 4))
				}
			})
		}))

	g.turn("Describing the most recent failed MLflow run.",
		g.bash("mlflow runs describe --run-id "+follow, func(o *out) {
			o.add("{\n  \"info\": {")
			o.addf("    \"artifact_uri\": \"s3://warp-mlflow/%d/%s/artifacts\",\n    \"end_time\": %s,\n    \"experiment_id\": \"%d\",\n    \"lifecycle_stage\": \"active\",\n    \"run_id\": \"%s\",\n    \"run_name\": \"sft-7b\",\n    \"start_time\": %s,", exp, follow, g.A(func() string { return itoa(int(g.ago(time.Duration(g.n(60, 300)) * time.Minute).UnixMilli())) }), exp, follow, g.A(func() string { return itoa(int(g.ago(time.Duration(g.n(400, 900)) * time.Minute).UnixMilli())) }))
			o.fail("    \"status\": \"FAILED\",")
			o.add("    \"user_id\": \"warp-svc\"\n  },\n  \"data\": {\n    \"metrics\": {")
			o.fill(o.budget(0.5), func() {
				o.addf("      \"%s/%s\": %s,", g.pick("train", "eval", "sys"), strings.Join(g.words(pyWords, 2), "_"), g.f(0, 10, 6))
			})
			o.add("      \"train/loss\": 1.8123\n    },\n    \"params\": {")
			for range g.n(10, 30) {
				o.addf("      \"%s\": \"%s\",", strings.Join(g.words(pyWords, 2), "_"), g.f(0, 100, 3))
			}
			o.add("      \"seed\": \"17\"\n    },\n    \"tags\": {")
			o.addf("      \"mlflow.source.git.commit\": \"%s\",", g.A(g.mkHex(40)))
			o.failf("      \"warp.exit_reason\": \"NCCL watchdog timeout on %s\",", g.E("id", func() string { return fmt.Sprintf("rank%d@wa100-%04d", g.n(8, 63), g.n(101, 899)) }))
			o.add("      \"mlflow.user\": \"warp-svc\"\n    }\n  }\n}")
		}))

	best := g.A(g.mkHex(32))
	g.turn("Pulling the eval-loss history of the best finished run before tagging it.",
		g.bash(fmt.Sprintf("curl -s -H \"Authorization: Bearer $MLFLOW_TRACKING_TOKEN\" 'http://mlflow.warp.loomfield.net/api/2.0/mlflow/metrics/get-history?run_id=%s&metric_key=eval/loss&max_results=5000' | jq -c '.metrics[]'", best), func(o *out) {
			step := 0
			ts := g.now.UnixMilli() - 86400000
			stamp := func() string {
				return g.A(func() string { ts += int64(g.n(60000, 200000)); return itoa(int(ts)) })
			}
			o.fill(o.budget(0.7), func() {
				step += 200
				o.addf("{\"key\":\"eval/loss\",\"value\":%s,\"timestamp\":%s,\"step\":%d}", g.f(1.2, 2.4, 6), stamp(), step)
			}, at{0.5, func() {
				o.addf("{\"key\":\"eval/loss\",\"value\":%s,\"timestamp\":%s,\"step\":%d,\"run_id\":\"%s\"}", g.f(1.2, 1.3, 6), stamp(), step, g.P("hash", g.mkHex(32)))
			}})
		}),
		g.bash(fmt.Sprintf("python -c \"import mlflow; mlflow.MlflowClient().set_tag('%s', 'warp.stage', 'candidate')\" && mlflow runs describe --run-id %s | jq -r '.data.tags[\"warp.stage\"]'", best, best), func(o *out) {
			o.add("candidate")
		}))
	g.say("Both trackers agree: the crashed runs died in the distributed layer (watchdog timeouts), not in the model code; the finished runs are healthy. The best finished run by eval loss is now tagged warp.stage=candidate. Nothing was deleted.")
}

func (g *gen) smokeOK(o *out) {
	o.add("connecting to localhost:8001 (grpc, ssl=False)")
	for i := range 64 {
		if i < 6 || i > 59 {
			o.addf("req %02d ok  scores[0]=%s  latency_ms=%s  request_id=%s", i, g.f(-3, 3, 5), g.f(2, 9, 2), g.A(g.mkReq("sm-", 12)))
		}
	}
	o.addf("64/64 ok, p50 %sms, server %s", g.f(2, 5, 2), g.P("version", g.mkVersion()))
}
