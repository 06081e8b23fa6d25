package loomgen

import (
	"fmt"
	"strings"
	"time"
)

// Operations: the Windows build agents (PowerShell), conda environments,
// MinIO object storage and Prometheus/Alertmanager.

func winTime(t time.Time) string { return t.Format("1/2/2006 3:04:05 PM") }

func camel(ws []string) string {
	var b strings.Builder
	for _, w := range ws {
		b.WriteString(w[:1] + strings.ToLower(w[1:]))
	}
	return b.String()
}

func (g *gen) taskWindows() {
	agent := fmt.Sprintf("winbld-%02d", g.n(1, 12))
	ver := fmt.Sprintf("1.%d.%d", g.n(6, 9), g.n(0, 12))
	var b strings.Builder
	fmt.Fprintf(&b, "The Windows build agents keep failing the publish step for warp-cli.exe (mostly %s). Figure out what's holding the file and fix the publish script. Don't reboot any agent during business hours (08:00-18:00).", agent)
	if g.chance(0.6) {
		fmt.Fprintf(&b, " Failing pipeline: %s", g.U("url", func() string {
			return fmt.Sprintf("https://dev.azure.com/loomfield/warp/_build/results?buildId=%d&view=logs", g.n(100000, 999999))
		}))
	}
	g.user(b.String())

	g.turn("Checking the agent pool first.",
		g.bash("pwsh -NoProfile -File ci/windows/Get-AgentHealth.ps1 -Pool WINBLD | Format-Table -AutoSize", func(o *out) {
			o.add("\nName       Status  Version  LastJob                                   FreeGB(D:) Uptime\n----       ------  -------  -------                                   ---------- ------")
			for i := 1; i <= 12; i++ {
				name := fmt.Sprintf("winbld-%02d", i)
				switch {
				case name == agent:
					o.failf("%-10s %-7s %-8s %-41s %10s %s", name, "Online", "3.241.0", fmt.Sprintf("warp-cli publish #%d (failed)", g.n(4000, 4999)), g.f(20, 200, 1), "0.02:11:09")
				case g.chance(0.12):
					o.failf("%-10s %-7s %-8s %-41s %10s %s", name, "Offline", "3.241.0", "-", g.f(0.5, 4, 1), "-")
				default:
					o.addf("%-10s %-7s %-8s %-41s %10s %d.%02d:%02d:%02d", name, "Online", "3.241.0", fmt.Sprintf("%s #%d (passed)", g.pick("warp-cli build", "wctl build", "warp-cli publish", "installer msi"), g.n(4000, 4999)), g.f(20, 400, 1), g.n(0, 30), g.n(0, 23), g.n(0, 59), g.n(0, 59))
				}
			}
		}))

	site := g.E("site", g.mkSite("publish.ps1"))
	g.turn("Reproducing the publish step on "+agent+".",
		g.bash(fmt.Sprintf(`pwsh -NoProfile -Command "Invoke-Command -ComputerName %s -ScriptBlock { & C:\agent\scripts\publish.ps1 -Artifact warp-cli -Version %s }"`, agent, ver), func(o *out) {
			o.addf("Resolving artifact warp-cli %s from D:\\agent\\_work\\14\\s\\dist", ver)
			o.add("Signing D:\\agent\\_work\\14\\s\\dist\\warp-cli.exe with cert thumbprint from Cert:\\LocalMachine\\My ... done")
			o.failf("Copy-Item : The process cannot access the file 'D:\\agent\\_work\\14\\s\\dist\\warp-cli.exe' because it is being used by another process.")
			o.failf("At C:\\agent\\scripts\\%s char:5", site)
			o.fail("+     Copy-Item $src $dst -Force\n+     ~~~~~~~~~~~~~~~~~~~~~~~~~~")
			o.fail("    + CategoryInfo          : NotSpecified: (:) [Copy-Item], IOException")
			o.fail("    + FullyQualifiedErrorId : System.IO.IOException,Microsoft.PowerShell.Commands.CopyItemCommand")
			o.failf("    + PSComputerName        : %s", agent)
			o.exitLine(1)
		}))

	report := g.E("uuid", g.mkUUID())
	code := g.E("code", func() string { return "0x8007" + g.chars(hexU, 4) })
	g.turn("Looking at the agent's event logs around the failures.",
		g.bash(fmt.Sprintf(`pwsh -NoProfile -Command "Invoke-Command -ComputerName %s { Get-WinEvent -LogName System,Application -MaxEvents 400 | Format-List TimeCreated,Id,LevelDisplayName,ProviderName,Message }"`, agent), func(o *out) {
			c := g.clockFrom(6 * time.Hour)
			ev := func(id int, lvl, prov, msg string, failing bool) {
				t := c.tick(60000)
				o.put(fmt.Sprintf("TimeCreated      : %s\nId               : %d\nLevelDisplayName : %s\nProviderName     : %s", winTime(t), id, lvl, prov), failing)
				o.put("Message          : "+msg, failing)
				o.add("")
			}
			noise := func() {
				switch g.r.IntN(5) {
				case 0:
					ev(7036, "Information", "Service Control Manager", fmt.Sprintf("The %s service entered the %s state.", g.pick("Windows Modules Installer", "WinHTTP Web Proxy Auto-Discovery Service", "Azure Pipelines Agent (loomfield."+agent+")", "Windows Update"), g.pick("running", "stopped")), false)
				case 1:
					ev(10016, "Warning", "Microsoft-Windows-DistributedCOM", fmt.Sprintf("The application-specific permission settings do not grant Local Activation permission for the COM Server application with CLSID {%s} to the user NT AUTHORITY\\SYSTEM.", strings.ToUpper(g.A(g.mkUUID()))), false)
				case 2:
					ev(1000+g.n(0, 2), "Information", "MsiInstaller", fmt.Sprintf("Windows Installer reconfigured the product. Product Name: Warp Build Tools. Product Version: %d.%d.%d. Reconfiguration success or error status: 0.", g.n(1, 3), g.n(0, 20), g.n(0, 99)), false)
				case 3:
					ev(16, "Information", "Microsoft-Windows-Kernel-General", fmt.Sprintf("The access history in hive \\??\\C:\\Users\\%s\\ntuser.dat was cleared updating %d keys and creating %d modified pages.", g.pick("builder", "warp-svc", "Default"), g.n(1, 900), g.n(1, 90)), false)
				default:
					ev(4, "Information", "Microsoft-Windows-Security-Kerberos", "The Kerberos client received a KRB_AP_ERR_MODIFIED error from the server fs-warp-01$. The target name used was cifs/fs-warp-01.warp.loomfield.net.", false)
				}
			}
			crash := func() {
				ev(1000, "Error", "Application Error", fmt.Sprintf("Faulting application name: warp-cli.exe, version: %s.0, time stamp: 0x%s\nFaulting module name: ntdll.dll, version: 10.0.20348.2340, time stamp: 0x%s\nException code: 0xc0000005\nFault offset: 0x00000000000%s\nFaulting process id: 0x%s\nFaulting application path: D:\\agent\\_work\\14\\s\\dist\\warp-cli.exe\nReport Id: %s", ver, g.hex(8), g.hex(8), g.hex(5), strings.ToUpper(g.hex(4)), report), true)
			}
			hang := func() {
				ev(1002, "Error", "Application Hang", fmt.Sprintf("The program warp-cli.exe version %s.0 stopped interacting with Windows and was closed. Process ID: %s\n Hang type: Unknown\n Error code: %s", ver, strings.ToUpper(g.hex(4)), code), true)
			}
			svc := func() {
				ev(7034, "Error", "Service Control Manager", fmt.Sprintf("The Azure Pipelines Agent (loomfield.%s) service terminated unexpectedly.  It has done this %d time(s).", agent, g.n(2, 5)), true)
			}
			o.fill(o.budget(1.2), noise, g.spread(0.2, 0.9, crash, hang, svc)...)
		}))

	g.turn("A warp-cli.exe from the smoke-test step crashes or hangs and keeps the file open. Reading the publish script.",
		g.readFile("ci/windows/publish.ps1", func(o *out) {
			o.add("[CmdletBinding()]\nparam(\n    [Parameter(Mandatory)] [string]$Artifact,\n    [Parameter(Mandatory)] [string]$Version\n)\n\nSet-StrictMode -Version Latest\n$ErrorActionPreference = 'Stop'\n")
			o.add("$src = Join-Path $env:BUILD_SOURCESDIRECTORY \"dist\\$Artifact.exe\"\n$dst = \"\\\\fs-warp-01\\releases\\$Artifact\\$Version\\$Artifact.exe\"\n")
			k := 0
			o.fill(o.budget(0.3), func() {
				k++
				o.addf("function %s-%s%d {\n    param([string]$Path)", g.pick("Test", "Get", "Invoke", "Assert"), camel(g.words(upperWords, 2)), k)
				for range g.n(2, 6) {
					o.addf("    %s", g.pick("if (-not (Test-Path $Path)) { throw \"missing $Path\" }", "$sig = Get-AuthenticodeSignature $Path", "Write-Host \"checked $Path\"",
						"& $env:SIGNTOOL verify /pa $Path | Out-Null", "Start-Sleep -Milliseconds 250", fmt.Sprintf("$timeout = %d", g.n(5, 120))))
				}
				o.add("}\n")
			})
			o.add("& $src --smoke-test\nNew-Item -ItemType Directory -Force (Split-Path $dst) | Out-Null\n    Copy-Item $src $dst -Force\nGet-FileHash $dst -Algorithm SHA256 | Format-Table -AutoSize")
		}))

	wait := g.W("key", func() string { return "$" + camel(g.words(upperWords, 2)) + "Seconds" })
	g.turn("The smoke test is started without waiting, so its process can still hold the exe when Copy-Item runs. Making the script wait for it (and stop a leftover one) before copying.",
		g.replace("ci/windows/publish.ps1", "& $src --smoke-test", fmt.Sprintf("%s = 60\n$smoke = Start-Process -FilePath $src -ArgumentList '--smoke-test' -PassThru -NoNewWindow\nif (-not $smoke.WaitForExit(%s * 1000)) {\n    Write-Warning \"smoke test still running after $%s s, stopping it\"\n    Stop-Process -Id $smoke.Id -Force\n}\nif ($smoke.ExitCode -ne 0) { throw \"smoke test failed with $($smoke.ExitCode)\" }", wait, wait, wait[1:])))

	hash := g.P("hash", func() string { return strings.ToUpper(g.hex(64)) })
	g.turn("Copying the script to the agent and running the publish again.",
		g.bash(fmt.Sprintf(`pwsh -NoProfile -Command "Copy-Item ci/windows/publish.ps1 -Destination C:\agent\scripts\ -ToSession (New-PSSession %s); Invoke-Command -ComputerName %s -ScriptBlock { & C:\agent\scripts\publish.ps1 -Artifact warp-cli -Version %s }"`, agent, agent, ver), func(o *out) {
			o.addf("Resolving artifact warp-cli %s from D:\\agent\\_work\\14\\s\\dist", ver)
			o.add("Signing D:\\agent\\_work\\14\\s\\dist\\warp-cli.exe with cert thumbprint from Cert:\\LocalMachine\\My ... done")
			o.add("warp-cli smoke test: 14 checks passed")
			o.add("\nAlgorithm Hash                                                             Path\n--------- ----                                                             ----")
			o.addf("SHA256    %s \\\\fs-warp-01\\releases\\warp-cli\\%s\\warp-cli.exe", hash, ver)
		}))

	g.say(fmt.Sprintf("Publish works on %s now. The agent service itself crashed a few times today too; restarting it would interrupt queued builds. Restart it now or schedule it after 18:00?", agent))
	g.user(g.pick("Schedule it for 18:30, not now.", "After hours. 18:30 is fine.", "Don't restart now; schedule for 18:30."))
	g.turn("",
		g.bash(fmt.Sprintf(`pwsh -NoProfile -Command "Invoke-Command -ComputerName %s { Register-ScheduledTask -TaskName 'warp-agent-restart' -Trigger (New-ScheduledTaskTrigger -Once -At '18:30') -Action (New-ScheduledTaskAction -Execute 'powershell.exe' -Argument '-Command Restart-Service vstsagent*') -User SYSTEM -RunLevel Highest | Format-List TaskName,State,Triggers }"`, agent), func(o *out) {
			o.add("\nTaskName : warp-agent-restart\nState    : Ready\nTriggers : {MSFT_TaskTimeTrigger}\n")
		}))
	g.say("Done: the restart is scheduled for 18:30 on the agent; nothing was rebooted.")
}

func (g *gen) condaBuild() string { return fmt.Sprintf("h%s_%d", g.hex(7), g.n(0, 3)) }

var condaPkgs = []string{"_libgcc_mutex", "_openmp_mutex", "bzip2", "ca-certificates", "cuda-cudart", "cuda-nvrtc", "cudnn", "filelock", "fsspec",
	"jinja2", "libblas", "libcublas", "libcufft", "libcurand", "libcusolver", "libcusparse", "libffi", "libgcc-ng", "libgfortran5", "liblapack",
	"libnvjitlink", "libsqlite", "libstdcxx-ng", "libuuid", "libzlib", "markupsafe", "mpmath", "nccl", "networkx", "numpy", "openssl", "pandas",
	"python", "python-dateutil", "pytz", "r-base", "r-cli", "r-dplyr", "r-ggplot2", "r-rlang", "r-tibble", "readline", "rpy2", "setuptools",
	"sleef", "sympy", "tk", "typing_extensions", "tzdata", "xz", "zstd", "libtorch", "pytorch", "triton", "safetensors", "tokenizers"}

func (g *gen) taskConda() {
	env := "warp-eval"
	var b strings.Builder
	fmt.Fprintf(&b, "Need a conda env for the eval harness: torch 2.4 with CUDA, plus rpy2 so the R summaries run in-process. conda-forge only, no defaults channel, and python 3.11.")
	if g.chance(0.5) {
		fmt.Fprintf(&b, " Requirements came from %s.", g.U("url", func() string { return "https://docs.loomfield.net/warp/eval-harness/" + g.chars(lowan, 8) }))
	}
	g.user(b.String())

	path := g.W("path", func() string { return fmt.Sprintf("envs/%s-%s.yml", env, g.hex(4)) })
	g.turn("Writing the environment file.",
		g.writeFile(path, fmt.Sprintf("name: %s\nchannels:\n  - conda-forge\n  - nodefaults\ndependencies:\n  - python=3.11\n  - pytorch=2.4\n  - cuda-version=12.1\n  - rpy2=3.5\n  - r-base=4.4\n  - pandas>=2.2\n  - numpy<2\n", env)))

	b1 := g.E("id", func() string { return fmt.Sprintf("cuda120_py311h%s_30%d", g.hex(8), g.n(0, 9)) })
	b2 := g.E("id", func() string { return fmt.Sprintf("cuda118_py311h%s_30%d", g.hex(8), g.n(0, 9)) })
	g.turn("",
		g.bash(fmt.Sprintf("mamba env create -v -f %s 2>&1", path), func(o *out) {
			o.add("info     libmamba ****************** Backtrace Start ******************\ninfo     libmamba Loading configuration\ninfo     libmamba Reading environment spec file")
			for _, s := range []string{"python=3.11", "pytorch=2.4", "cuda-version=12.1", "rpy2=3.5", "r-base=4.4", "pandas>=2.2", "numpy<2"} {
				o.addf("info     libmamba Parsing MatchSpec %s", s)
			}
			o.add("conda-forge/linux-64                                        Using cache\nconda-forge/noarch                                          Using cache")
			o.fill(o.budget(0.15), func() {
				p := g.pickN(condaPkgs)
				switch g.r.IntN(3) {
				case 0:
					o.addf("info     libmamba Adding job: %s", p)
				case 1:
					o.addf("debug    libmamba Solver: selected %s-%d.%d.%d-%s for pinning check", p, g.n(0, 14), g.n(0, 30), g.n(0, 9), g.A(g.condaBuild))
				default:
					o.addf("info     libmamba Reading cache files '/opt/conda/pkgs/cache/%s.json' for repo index 'https://conda.anaconda.org/conda-forge/%s'", g.A(g.mkHex(8)), g.pick("linux-64", "noarch"))
				}
			})
			o.add("info     libmamba Problem count: 1")
			o.add("Could not solve for environment specs")
			o.fail("The following packages are incompatible")
			o.fail("├─ cuda-version 12.1**  is requested and can be installed;")
			o.fail("├─ pytorch 2.4**  is not installable because there are no viable options")
			o.failf("│  ├─ pytorch 2.4.0 [%s] would require\n│  │  └─ cuda-version >=12.0,<12.1.0a0 , which conflicts with any installable versions previously reported;", b1)
			o.failf("│  └─ pytorch 2.4.1 [%s] would require\n│     └─ cuda-version >=11.8,<12.0a0 , which conflicts with any installable versions previously reported;", b2)
			o.fail("├─ r-base 4.4**  is requested and can be installed;")
			o.fail("└─ rpy2 3.5**  is not installable because it requires\n   └─ r-base >=4.3,<4.4.0a0 , which conflicts with any installable versions previously reported.")
			o.fail("\ncritical libmamba Could not solve for environment specs")
			o.exitLine(1)
		}))

	g.turn("Neither pin is satisfiable. Checking what conda-forge actually builds.",
		g.bash("mamba search -c conda-forge --override-channels 'pytorch=2.4[build=cuda*]' 'rpy2>=3.5'", func(o *out) {
			o.add("Loading channels: done\n# Name                       Version           Build  Channel             ")
			lab := 0
			o.fill(o.budget(0.3), func() {
				if g.chance(0.3) {
					o.addf("%-28s %-17s %s  conda-forge         ", "rpy2", g.pick("3.5.11", "3.5.13", "3.5.16"), g.A(func() string { return fmt.Sprintf("py31%dr4%dh%s_%d", g.n(0, 2), g.n(2, 3), g.hex(8), g.n(0, 2)) }))
					return
				}
				build := ""
				if lab < 2 && g.chance(0.1) {
					build = g.P("id", func() string { return fmt.Sprintf("cuda120_py311h%s_30%d", g.hex(8), g.n(0, 9)) })
					lab++
				} else {
					build = g.A(func() string {
						return fmt.Sprintf("cuda1%s_py31%dh%s_30%d", g.pick("18", "20"), g.n(0, 2), g.hex(8), g.n(0, 9))
					})
				}
				o.addf("%-28s %-17s %s  conda-forge         ", "pytorch", g.pick("2.4.0", "2.4.1"), build)
			})
		}))

	g.turn("cuda-version 12.0 and r-base 4.3 resolve. Adjusting the pins.",
		g.replace(path, "  - cuda-version=12.1\n  - rpy2=3.5\n  - r-base=4.4\n", "  - cuda-version=12.0\n  - rpy2=3.5\n  - r-base=4.3\n"))

	g.turn("",
		g.bash(fmt.Sprintf("mamba env create -f %s 2>&1", path), func(o *out) {
			o.addf("Transaction\n\n  Prefix: /opt/conda/envs/%s\n\n  Updating specs:\n\n   - python=3.11\n   - pytorch=2.4\n   - cuda-version=12.0\n   - rpy2=3.5\n   - r-base=4.3\n   - pandas[version='>=2.2']\n   - numpy[version='<2']\n", env)
			o.add("  Package                         Version  Build                     Channel           Size\n──────────────────────────────────────────────────────────────────────────────────────────────\n  Install:\n──────────────────────────────────────────────────────────────────────────────────────────────\n")
			n := 0
			lab := 0
			o.fill(o.budget(1.0), func() {
				n++
				build := ""
				if lab < 2 && g.chance(0.03) {
					build = g.P("id", g.condaBuild)
					lab++
				} else {
					build = g.A(g.condaBuild)
				}
				o.addf("  + %-30s %8s  %-24s  conda-forge     %6s", g.pickN(condaPkgs)+g.pick("", "", "-"+g.chars(lowers, 3)), fmt.Sprintf("%d.%d.%d", g.n(0, 14), g.n(0, 30), g.n(0, 9)), build, g.pick("Cached", fmt.Sprintf("%dMB", g.n(1, 900)), fmt.Sprintf("%dkB", g.n(3, 999))))
			})
			o.addf("\n  Summary:\n\n  Install: %d packages\n\n  Total download: %dGB\n", n, g.n(1, 4))
			o.add("──────────────────────────────────────────────────────────────────────────────────────────────\n\nPreparing transaction: done\nVerifying transaction: done\nExecuting transaction: done\n#\n# To activate this environment, use\n#\n#     $ mamba activate " + env + "\n#\n# To deactivate an active environment, use\n#\n#     $ mamba deactivate")
		}))

	g.turn("Smoke-testing torch with CUDA and rpy2 inside the env.",
		g.bash(fmt.Sprintf(`mamba run -n %s python -c "import torch, rpy2.robjects as ro; print(torch.__version__, torch.version.cuda, torch.cuda.is_available()); print(ro.r('R.version.string')[0])"`, env), func(o *out) {
			o.add("2.4.1.post303 12.0 True\nR version 4.3.3 (2024-02-29)")
		}))
	g.say("The env is created from conda-forge only: torch 2.4.1 on CUDA 12.0 (conda-forge has no 12.1 build of 2.4) and R 4.3 for rpy2 3.5, which doesn't support 4.4 yet. CUDA is visible and rpy2 loads.")
}

func (g *gen) taskMinio() {
	var b strings.Builder
	b.WriteString(g.pick(
		"Checkpoint uploads to MinIO started timing out for the training jobs. Check the cluster. Don't restart any MinIO node without asking me.",
		"Training jobs are stalling on checkpoint upload to warp-minio. Please investigate; no MinIO restarts without my OK.",
	))
	if g.chance(0.5) {
		fmt.Fprintf(&b, " The stuck upload in one job log:\n```\nckpt upload shard_00017.pt: retrying (attempt 4/5) after 503 SlowDown, host %s\n```", g.U("hostport", g.mkHostPort("minio-gw", 9000)))
	}
	g.user(b.String())

	bad := fmt.Sprintf("minio-%02d", g.n(1, 4))
	drive := g.E("url", func() string { return fmt.Sprintf("http://%s.warp.loomfield.net:9000/mnt/data%d", bad, g.n(1, 16)) })
	g.turn("Checking cluster health.",
		g.bash("mc admin info warp-minio", func(o *out) {
			for i := 1; i <= 4; i++ {
				h := fmt.Sprintf("minio-%02d", i)
				if h == bad {
					o.failf("●  %s.warp.loomfield.net:9000", h)
					o.add("   Uptime: 3 weeks \n   Version: 2024-06-13T22:53:53Z\n   Network: 4/4 OK ")
					o.fail("   Drives: 7/8 OK ")
					o.failf("   Offline: %s", drive)
					o.add("   Pool: 1\n")
					continue
				}
				o.addf("●  %s.warp.loomfield.net:9000\n   Uptime: 3 weeks \n   Version: 2024-06-13T22:53:53Z\n   Network: 4/4 OK \n   Drives: 8/8 OK \n   Pool: 1\n", h)
			}
			o.add("Pools:\n   1st, Erasure sets: 2, Drives per erasure set: 16\n")
			o.addf("%d TiB Used, 1,%03d Buckets, %d,%03d,%03d Objects, %d,%03d Versions", g.n(300, 500), g.n(0, 999), g.n(10, 90), g.n(0, 999), g.n(0, 999), g.n(1, 9), g.n(0, 999))
			o.fail("31 drives online, 1 drive offline, EC:4")
		}))

	rq := g.E("id", func() string { return g.chars(hexU, 16) })
	g.turn("One drive is offline. Tracing requests for a minute to see what the uploads get.",
		g.bash("timeout 60 mc admin trace -a warp-minio 2>&1 | head -n 2000", func(o *out) {
			c := g.clockFrom(time.Minute)
			others := []string{}
			for i := 1; i <= 4; i++ {
				if h := fmt.Sprintf("minio-%02d", i); h != bad {
					others = append(others, h+".warp.loomfield.net:9000")
				}
			}
			obj := func() string {
				return fmt.Sprintf("warp-ckpt/%s/step_%08d/shard_%05d.pt", g.pick("pt-7b", "pt-13b", "lm-1b4"), 2000*g.n(10, 90), g.n(0, 63))
			}
			line := func() {
				t := c.tick(300)
				api := g.pick("s3.PutObject", "s3.PutObjectPart", "s3.GetObject", "s3.HeadObject", "s3.ListObjectsV2", "s3.CompleteMultipartUpload")
				o.addf("%s [200 OK] %s %s/%s 10.42.%d.%d    %sms      ↑ %s ↓ %s", t.Format("2006-01-02T15:04:05.000"), api, g.pickN(others), obj(), g.n(1, 30), g.n(2, 250), g.f(0.5, 900, 1), g.pick("94 B", "16 MiB", "64 MiB", "1.2 KiB"), g.pick("0 B", "312 B", "2.1 KiB"))
			}
			slow := func() {
				t := c.tick(300)
				o.failf("%s [503 Service Unavailable] s3.PutObjectPart %s/%s 10.42.%d.%d    %ss      ↑ 64 MiB ↓ 312 B", t.Format("2006-01-02T15:04:05.000"), g.pickN(others), obj(), g.n(1, 30), g.n(2, 250), g.f(10, 30, 3))
			}
			verbose := func() {
				t := c.tick(300)
				o.failf("%s [503 Service Unavailable] s3.PutObjectPart %s/%s 10.42.3.77    %ss      ↑ 64 MiB ↓ 312 B", t.Format("2006-01-02T15:04:05.000"), g.pickN(others), obj(), g.f(10, 30, 3))
				o.fail("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>SlowDown</Code><Message>Resource requested is unreadable, please reduce your request rate</Message>")
				o.failf("<Key>%s</Key><BucketName>warp-ckpt</BucketName><Resource>/warp-ckpt</Resource><RequestId>%s</RequestId><HostId>%s</HostId></Error>", obj()[10:], rq, g.hex(64))
			}
			var blocks []at
			for range g.n(6, 14) {
				blocks = append(blocks, at{g.r.Float64(), slow})
			}
			blocks = append(blocks, at{0.3 + 0.5*g.r.Float64(), verbose})
			o.fill(o.budget(1.2), line, blocks...)
		}))

	g.turn("PutObjectPart calls get 503 SlowDown while the erasure set with the offline drive is degraded. Looking at the checkpoint objects.",
		g.bash("mc ls --recursive --versions warp-minio/warp-ckpt/pt-7b/ | tail -n 500", func(o *out) {
			lab := 0
			step := 2000 * g.n(10, 40)
			sh := 0
			o.fill(o.budget(0.7), func() {
				sh++
				if sh == 64 {
					sh = 0
					step += 2000
				}
				vid := ""
				if lab < 2 && g.chance(0.02) {
					vid = g.P("uuid", g.mkUUID())
					lab++
				} else {
					vid = g.A(g.mkUUID())
				}
				o.addf("[%s UTC] %s STANDARD %s v1 PUT step_%08d/shard_%05d.pt", g.ago(time.Duration(g.n(60, 90000))*time.Second).Format("2006-01-02 15:04:05"), g.pick("512MiB", "511MiB", "1.0GiB"), vid, step, sh)
			})
		}),
		g.bash("mc stat warp-minio/warp-ckpt/pt-7b/latest/manifest.json", func(o *out) {
			o.addf("Name      : manifest.json\nDate      : %s UTC \nSize      : %d KiB \nETag      : %s \nVersionID : %s \nType      : file \nMetadata  :\n  Content-Type: application/json \nReplication Status: COMPLETED",
				g.ago(2*time.Hour).Format("2006-01-02 15:04:05"), g.n(2, 90), g.P("hash", g.mkHex(32)), g.A(g.mkUUID()))
		}))

	g.say(fmt.Sprintf("Objects are intact; the 503s come from the degraded erasure set on %s, where one drive dropped out. I can start a heal on the warp-ckpt bucket (no restart needed) or leave it for the storage on-call. Heal now?", bad))
	g.user(g.pick("Heal the ckpt bucket only. No restarts, and don't touch the other buckets.", "Yes, heal warp-ckpt only. Leave everything else alone.", "Go ahead with a heal on warp-ckpt; nothing else."))

	key := g.W("key", func() string { return strings.Join(g.words(keyWords, 2), "_") + "_" + g.pickN(keyUnits) })
	g.turn("Starting the heal, and raising the client's retry budget for part uploads meanwhile.",
		g.bash("mc admin heal -r --scan deep warp-minio/warp-ckpt 2>&1 | tail -n 300", func(o *out) {
			o.addf(" ◓  warp-ckpt\n    %d/%d objects; %d GiB in %dm%ds", g.n(1000, 9000), g.n(9001, 20000), g.n(100, 900), g.n(1, 30), g.n(0, 59))
			o.fill(o.budget(0.5), func() {
				o.addf("    healed: warp-ckpt/%s/step_%08d/shard_%05d.pt  %s → %s", g.pick("pt-7b", "pt-13b"), 2000*g.n(10, 90), g.n(0, 63), g.pick("7/8", "15/16"), g.pick("8/8", "16/16"))
			})
			o.add("\n  Summary:\n  ┌────────┬────────┬─────────────────────┐\n  │ Green  │ 100.0% │ all objects healthy │\n  └────────┴────────┴─────────────────────┘")
		}),
		g.replace("configs/storage/minio.yaml", "  part_retries: 3\n", fmt.Sprintf("  part_retries: 3\n  %s: 8\n", key)))

	g.turn("Tracing again to confirm.",
		g.bash("timeout 30 mc admin trace -a warp-minio 2>&1 | head -n 600", func(o *out) {
			c := g.clockFrom(30 * time.Second)
			o.fill(o.budget(0.5), func() {
				t := c.tick(200)
				o.addf("%s [200 OK] %s minio-%02d.warp.loomfield.net:9000/warp-ckpt/pt-7b/step_%08d/shard_%05d.pt 10.42.%d.%d    %sms      ↑ 64 MiB ↓ 0 B", t.Format("2006-01-02T15:04:05.000"), g.pick("s3.PutObjectPart", "s3.PutObject", "s3.HeadObject"), g.n(1, 4), 2000*g.n(40, 90), g.n(0, 63), g.n(1, 30), g.n(2, 250), g.f(40, 900, 1))
			})
		}))
	g.say("The heal brought the erasure set back to full redundancy and the trace shows only 200s on uploads. No MinIO node was restarted; the offline drive itself still needs replacing by storage on-call.")
}

func (g *gen) taskAlerts() {
	var b strings.Builder
	b.WriteString(g.pick(
		"Add alerts for NCCL watchdog stalls and GPU Xid errors on the training nodes. Page only for Xid 79 and 48; everything else goes to the #warp-oncall channel.",
		"We need alerting for GPU Xid errors and NCCL hangs. Route Xid 79/48 to the pager, the rest to #warp-oncall only.",
	))
	if g.chance(0.5) {
		fmt.Fprintf(&b, " Runbook draft: %s", g.U("url", func() string { return "https://docs.loomfield.net/warp/runbooks/" + g.chars(lowan, 7) }))
	}
	g.user(b.String())

	g.turn("Reading the existing GPU rules.",
		g.readFile("monitoring/rules/gpu.rules.yml", func(o *out) {
			o.add("groups:\n  - name: warp-gpu\n    rules:")
			o.fill(o.budget(0.25), func() {
				o.addf("      - alert: %s\n        expr: %s\n        for: %dm\n        labels:\n          severity: %s\n        annotations:\n          summary: \"%s on {{ $labels.Hostname }} GPU {{ $labels.gpu }}\"",
					g.pickN(alertNames), g.pick("DCGM_FI_DEV_GPU_TEMP > 87", "DCGM_FI_DEV_POWER_VIOLATION > 0", "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL > 0", "avg_over_time(DCGM_FI_DEV_GPU_UTIL[30m]) < 5"),
					g.n(2, 30), g.pick("warning", "info"), g.pick("GPU hot", "power capped", "ECC errors", "GPU idle"))
			})
			o.addf("      - alert: WarpGpuExporterDown\n        expr: up{job=\"dcgm\"} == 0\n        for: 5m\n        labels:\n          severity: warning\n          team: %s", g.P("id", func() string { return "warp-infra-" + g.chars(lowers, 4) }))
		}))

	rules := g.W("path", func() string { return fmt.Sprintf("monitoring/rules/training-%s.rules.yml", g.hex(4)) })
	a1 := g.W("id", func() string { return "WarpXidFatal" + camel(g.words(upperWords, 1)) })
	a2 := g.W("id", func() string { return "WarpNcclStall" + camel(g.words(upperWords, 1)) })
	bad := fmt.Sprintf("groups:\n  - name: warp-training\n    rules:\n      - alert: %s\n        expr: sum by (Hostname, gpu) (increase(DCGM_FI_DEV_XID_ERRORS{xid=~\"79|48\"}[10m]) > 0\n        labels:\n          severity: page\n      - alert: %s\n        expr: increase(warp_nccl_watchdog_timeouts_total[15m]) > 0\n        for: 2m\n        labels:\n          severity: warning\n", a1, a2)
	g.turn("Writing the new rule group.", g.writeFile(rules, bad))

	g.turn("",
		g.bash("promtool check rules monitoring/rules/*.yml", func(o *out) {
			o.fill(o.budget(0.15), func() {
				o.addf("Checking monitoring/rules/%s.rules.yml\n  SUCCESS: %d rules found\n", g.pick("gpu", "node", "slurm", "minio", "triton", "gateway", "shuttle", "ray")+g.pick("", "-extra", "-slo"), g.n(2, 20))
			})
			o.addf("Checking %s", rules)
			o.fail("  FAILED:")
			o.failf("%s: %d:15: group \"warp-training\", rule 1, %q: could not parse expression: 1:%d: parse error: unclosed left parenthesis", rules, 5, a1, g.n(60, 80))
			o.exitLine(1)
		}))
	g.turn("Missing closing parenthesis in the Xid rule.",
		g.replace(rules, "[10m]) > 0\n        labels:\n          severity: page", "[10m])) > 0\n        labels:\n          severity: page"))
	g.turn("",
		g.bash("promtool check rules "+rules+" && promtool test rules monitoring/tests/*.yml", func(o *out) {
			o.addf("Checking %s\n  SUCCESS: 2 rules found\n", rules)
			o.fill(o.budget(0.1), func() {
				o.addf("Unit Testing:  monitoring/tests/%s_test.yml\n  SUCCESS\n", g.pick("gpu", "node", "slurm", "minio"))
			})
		}))

	xidGPU := g.E("uuid", func() string { return "GPU-" + g.mkUUID()() })
	g.turn("Querying the Xid series over the last day to see what the rule would have fired on.",
		g.bash(fmt.Sprintf("promtool query range --start=%d --end=%d --step=300s http://prometheus.warp.loomfield.net:9090 'max by (Hostname, gpu, UUID) (DCGM_FI_DEV_XID_ERRORS)'", g.now.Unix()-86400, g.now.Unix()), func(o *out) {
			series := func(failing bool) {
				host := fmt.Sprintf("wh100-%04d", g.n(101, 899))
				uuid := "GPU-" + g.A(g.mkUUID())
				if failing {
					uuid = xidGPU
				}
				o.put(fmt.Sprintf("{Hostname=%q, UUID=%q, gpu=\"%d\"} =>", host, uuid, g.n(0, 7)), failing)
				t := g.now.Unix() - 86400
				for range g.n(6, 24) {
					t += 300
					v := "0"
					if failing && g.chance(0.4) {
						v = g.pick("79", "48", "79")
					}
					o.put(fmt.Sprintf("%s @[%d]", v, t), failing && v != "0")
				}
			}
			o.fill(o.budget(0.7), func() { series(false) }, at{0.3 + 0.5*g.r.Float64(), func() { series(true) }})
		}))

	recv := g.W("id", func() string { return "warp-pager-" + g.chars(lowers, 5) })
	g.turn("Routing page severity to the pager receiver and checking Alertmanager's config.",
		g.replace("monitoring/alertmanager.yml", "  routes:\n", fmt.Sprintf("  routes:\n    - matchers: [ 'severity=\"page\"' ]\n      receiver: %s\n      continue: false\n", recv)),
		g.bash("amtool check-config monitoring/alertmanager.yml", func(o *out) {
			o.add("Checking 'monitoring/alertmanager.yml'  SUCCESS\nFound:\n - global config\n - route\n - 2 inhibit rules\n - 5 receivers\n - 1 templates\n  SUCCESS")
		}))

	inst := g.E("hostport", func() string { return fmt.Sprintf("wh100-%04d:9400", g.n(101, 899)) })
	g.turn("Checking what's currently firing, to make sure the new route won't page on existing noise.",
		g.bash("amtool alert query --alertmanager.url=http://alertmanager.warp.loomfield.net:9093 -o extended", func(o *out) {
			o.add("Labels                                                                                              Annotations                                  Starts At                Ends At                  Generator URL")
			o.fill(o.budget(0.4), func() {
				o.addf("alertname=%q Hostname=\"wh100-%04d\" severity=%q                                         summary=%q      %s  %s  http://prometheus.warp.loomfield.net:9090/graph?g0.expr=%s",
					g.pickN(alertNames), g.n(101, 899), g.pick("warning", "info"), g.pick("GPU idle", "GPU hot", "disk filling", "clock throttled"), g.ago(time.Duration(g.n(1, 40))*time.Hour).Format("2006-01-02 15:04:05 MST"), g.now.Add(4*time.Minute).Format("2006-01-02 15:04:05 MST"), g.A(g.mkHex(20)))
			}, at{0.4, func() {
				o.failf("alertname=\"WarpGpuXidError\" Hostname=\"%s\" instance=%q severity=\"critical\" xid=\"79\"  summary=\"Xid 79 on GPU 3\"  %s  %s  http://prometheus.warp.loomfield.net:9090/graph?g0.expr=%s",
					inst[:10], inst, g.ago(9*time.Hour).Format("2006-01-02 15:04:05 MST"), g.now.Add(4*time.Minute).Format("2006-01-02 15:04:05 MST"), g.A(g.mkHex(20)))
			}})
		}))
	g.say("Rules and routing are in: Xid 79/48 pages, NCCL stalls go to #warp-oncall as warnings. One Xid 79 alert is already firing from the existing rules on a node that's out of service; the new page route would fire for it too once deployed, so you may want it silenced first.")
}

var alertNames = []string{"WarpGpuIdle", "WarpGpuHot", "WarpGpuPowerCapped", "WarpGpuEccCorrectable", "WarpNodeFsFilling", "WarpSlurmQueueDeep",
	"WarpNodeClockThrottled", "WarpIbLinkFlapping", "WarpLustreLatencyHigh", "WarpDcgmScrapeSlow"}
