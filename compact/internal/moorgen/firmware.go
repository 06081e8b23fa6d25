package moorgen

import (
	"fmt"
	"path"
	"strings"

	"github.com/strata-memory/strata/compact/internal/opsgen"
)

// Zephyr firmware of the tags: west builds, twister runs, flashing, fault
// dumps read over RTT and runs under QEMU and Renode.

const (
	zephyrBase = "/home/dev/zephyrproject/zephyr"
	armGcc     = "/opt/arm-gnu-toolchain-13.2.Rel1-x86_64-arm-none-eabi"
	fwApp      = root + "/firmware/app"
)

type board struct {
	name, qual, soc string
	flash, ram      int // bytes
}

var boards = []board{
	{"nrf52840dk", "nrf52840dk/nrf52840", "nrf52840", 1 << 20, 256 << 10},
	{"moorhen_tag", "moorhen_tag/nrf52833", "nrf52833", 512 << 10, 128 << 10},
	{"nucleo_l476rg", "nucleo_l476rg", "stm32l476xx", 1 << 20, 96 << 10},
}

var zephyrObjs = []string{"arch/arm/core/fatal.c", "arch/arm/core/cortex_m/fault.c", "arch/arm/core/cortex_m/irq_init.c",
	"lib/os/cbprintf_complete.c", "lib/os/heap.c", "lib/utils/ring_buffer.c", "kernel/sched.c", "kernel/timeout.c", "kernel/work.c",
	"kernel/sem.c", "kernel/mutex.c", "kernel/thread.c", "subsys/logging/log_core.c", "subsys/logging/backends/log_backend_rtt.c",
	"subsys/bluetooth/host/hci_core.c", "subsys/bluetooth/host/adv.c", "subsys/bluetooth/host/conn.c", "subsys/settings/src/settings.c",
	"subsys/fs/nvs/nvs.c", "drivers/sensor/st/lsm6dsl/lsm6dsl.c", "drivers/gpio/gpio_nrfx.c", "drivers/serial/uart_nrfx_uarte.c",
	"drivers/i2c/i2c_nrfx_twim.c", "drivers/flash/soc_flash_nrf.c", "soc/nordic/common/soc_secure.c", "modules/zcbor/src/zcbor_encode.c"}

// westPreamble is what west build prints before compiling.
func (g *gen) westPreamble(o *out, b board, pristine bool) {
	if pristine {
		o.add("-- west build: making build dir " + fwApp + "/build pristine")
	}
	o.add("-- west build: generating a build system\nLoading Zephyr default modules (Zephyr base).")
	o.addf("-- Application: %s\n-- CMake version: 3.28.3\n-- Found Python3: /usr/bin/python3 (found suitable version \"3.12.3\", minimum required is \"3.10\") found components: Interpreter", fwApp)
	o.addf("-- Cache files will be written to: /home/dev/.cache/zephyr\n-- Zephyr version: 3.7.0 (%s)\n-- Found west (found suitable version \"1.2.0\", minimum required is \"0.14.0\")", zephyrBase)
	o.addf("-- Board: %s, qualifiers: %s", b.name, strings.TrimPrefix(b.qual, b.name+"/"))
	o.addf("-- Found toolchain: gnuarmemb (%s)\n-- Found Dtc: /usr/bin/dtc (found suitable version \"1.6.1\", minimum required is \"1.4.6\")", armGcc)
	o.addf("-- Found BOARD.dts: %s/boards/%s/%s.dts", zephyrBase, b.name, strings.ReplaceAll(b.qual, "/", "_"))
	o.addf("-- Found devicetree overlay: %s/boards/%s.overlay", fwApp, strings.ReplaceAll(b.qual, "/", "_"))
	o.addf("-- Generated zephyr.dts: %s/build/zephyr/zephyr.dts\n-- Generated devicetree_generated.h: %s/build/zephyr/include/generated/zephyr/devicetree_generated.h", fwApp, fwApp)
	o.addf("Parsing %s/Kconfig\nLoaded configuration '%s/boards/%s/%s_defconfig'\nMerged configuration '%s/prj.conf'", fwApp, zephyrBase, b.name, strings.ReplaceAll(b.qual, "/", "_"), fwApp)
	if g.chance(0.5) {
		o.addf("\nwarning: BT_CTLR_TX_PWR_PLUS_8 (defined at soc/nordic/Kconfig:%d) was assigned the value 'y' but got the value 'n'. Check these unsatisfied dependencies: (SOC_SERIES_NRF52X && BT_CTLR) (=n).", g.between(90, 400))
	}
	o.addf("Configuration saved to '%s/build/zephyr/.config'\nKconfig header saved to '%s/build/zephyr/include/generated/zephyr/autoconf.h'", fwApp, fwApp)
	o.addf("-- The C compiler identification is GNU 13.2.1\n-- The CXX compiler identification is GNU 13.2.1\n-- The ASM compiler identification is GNU\n-- Found assembler: %s/bin/arm-none-eabi-gcc", armGcc)
	o.addf("-- Configuring done (%.1fs)\n-- Generating done (0.1s)\n-- Build files have been written to: %s/build\n-- west build: building application", g.secs(2, 6), fwApp)
}

// ninjaLines prints the compile progress lines from k to upto of total,
// each object once (the list cycles when the build is longer than it).
func (g *gen) ninjaLines(o *out, from, upto, total int) {
	var objs []string
	for _, f := range zephyrObjs {
		objs = append(objs, fmt.Sprintf("Building C object zephyr/%s/CMakeFiles/%s.dir/%s.obj", path.Dir(f), strings.ReplaceAll(path.Dir(f), "/", "__"), f))
	}
	for _, f := range firmware.files {
		objs = append(objs, fmt.Sprintf("Building C object CMakeFiles/app.dir/%s.obj", strings.TrimPrefix(f, "firmware/app/")))
	}
	for _, f := range zephyrGen {
		objs = append(objs, f)
	}
	g.r.Shuffle(len(objs), func(i, j int) { objs[i], objs[j] = objs[j], objs[i] })
	for i := from; i <= upto; i++ {
		o.addf("[%d/%d] %s", i, total, objs[(i-from)%len(objs)])
	}
}

var zephyrGen = []string{"Generating include/generated/zephyr/version.h", "Generating ../../zephyr/include/generated/zephyr/syscall_list.h",
	"Generating linker_zephyr_pre0.cmd", "Generating isr_tables.c, isr_tables_vt.ld, isr_tables_swi.ld", "Building ASM object zephyr/arch/arm/core/cortex_m/CMakeFiles/arch__arm__core__cortex_m.dir/reset.S.obj",
	"Linking C static library zephyr/kernel/libkernel.a", "Linking C static library zephyr/libzephyr.a", "Linking C static library app/libapp.a",
	"Linking C static library zephyr/drivers/sensor/libdrivers__sensor.a", "Linking C static library zephyr/subsys/bluetooth/host/libsubsys__bluetooth__host.a",
	"Building C object zephyr/CMakeFiles/offsets.dir/arch/arm/core/offsets/offsets.c.obj", "Generating include/generated/zephyr/offsets.h",
	"Building C object zephyr/lib/libc/picolibc/CMakeFiles/lib__libc__picolibc.dir/libc-hooks.c.obj", "Building C object zephyr/drivers/clock_control/CMakeFiles/drivers__clock_control.dir/clock_control_nrf.c.obj",
	"Building C object zephyr/drivers/timer/CMakeFiles/drivers__timer.dir/nrf_rtc_timer.c.obj", "Building C object zephyr/subsys/bluetooth/controller/CMakeFiles/subsys__bluetooth__controller.dir/ll_sw/ull_adv.c.obj",
	"Building C object zephyr/subsys/bluetooth/controller/CMakeFiles/subsys__bluetooth__controller.dir/ll_sw/nordic/lll/lll_adv.c.obj",
	"Building C object zephyr/subsys/pm/CMakeFiles/subsys__pm.dir/pm.c.obj", "Building C object modules/segger/CMakeFiles/modules__segger.dir/SEGGER_RTT.c.obj",
	"Building C object modules/hal_nordic/nrfx/CMakeFiles/modules__hal_nordic__nrfx.dir/nrfx/drivers/src/nrfx_twim.c.obj"}

func (g *gen) westCmd(b board, pristine bool) string {
	c := "cd firmware && west build -b " + b.qual + " app"
	if pristine {
		c += " -p always"
	}
	return c
}

// westBuildPass is a successful build ending in its memory report.
func (g *gen) westBuildPass(b board) (string, *out) {
	o := &out{}
	pristine := g.chance(0.6)
	if pristine {
		g.westPreamble(o, b, true)
	} else {
		o.add("-- west build: running target all")
	}
	total := g.between(240, 330)
	from := 1
	if !pristine {
		from = total - g.between(6, 20)
	}
	steps := g.n(40, 120)
	start := max(from, total-steps)
	o.addf("[%d/%d] Preparing syscall dependency handling\n", from, total)
	if g.chance(0.5) {
		f := g.pick(firmware.files)
		o.addf("%s/%s: In function '%s_%s_%s':", root, f, stem(f), g.pick(words), g.pick(words))
		o.addf("%s/%s:%d:%d: warning: unused variable '%s' [-Wunused-variable]", root, f, g.lineFor(f), g.between(5, 30), g.pick(words))
	}
	g.ninjaLines(o, start, total-2, total)
	o.addf("[%d/%d] Linking C executable zephyr/zephyr.elf", total-1, total)
	flash := g.between(b.flash/8, b.flash*3/4)
	ram := g.between(b.ram/6, b.ram*3/4)
	o.add("Memory region         Used Size  Region Size  %age Used")
	o.addf("           FLASH:    %8d B     %6s    %6.2f%%", flash, kib(b.flash), 100*float64(flash)/float64(b.flash))
	o.addf("             RAM:    %8d B     %6s    %6.2f%%", ram, kib(b.ram), 100*float64(ram)/float64(b.ram))
	o.add("        IDT_LIST:          0 GB        32 KB      0.00%")
	o.addf("Generating files from %s/build/zephyr/zephyr.elf for board: %s", fwApp, b.name)
	o.addf("[%d/%d] cd %s/build/zephyr && moorhen-imgtool sign --version 2.%d.%d+%d zephyr.bin", total, total, fwApp, g.between(10, 19), g.between(0, 9), g.between(1, 300))
	o.addf("image version 2.%d.%d, build id %s", g.between(10, 19), g.between(0, 9), g.P("hash", g.hexf(12)))
	o.addf("image hash sha256:%s -> zephyr.signed.bin", g.P("hash", g.hexf(64)))
	return g.westCmd(b, pristine), o
}

func kib(n int) string {
	if n >= 1<<20 {
		return fmt.Sprintf("%d MB", n>>20)
	}
	return fmt.Sprintf("%d KB", n>>10)
}

// westBuildFail is a build that stops at the compiler or the linker.
func (g *gen) westBuildFail(b board) (string, *out) {
	o := &out{}
	pristine := g.chance(0.4)
	if pristine {
		g.westPreamble(o, b, true)
	} else {
		o.add("-- west build: running target all")
	}
	total := g.between(240, 330)
	stop := total - g.between(2, 40)
	start := max(1, stop-g.n(30, 90))
	o.addf("[%d/%d] Preparing syscall dependency handling\n", start, total)
	g.ninjaLines(o, start+1, stop-1, total)
	switch g.r.IntN(7) {
	case 0: // region overflow
		o.addf("[%d/%d] Linking C executable zephyr/zephyr_pre0.elf", stop, total)
		o.fail("FAILED: zephyr/zephyr_pre0.elf zephyr/zephyr_pre0.map " + fwApp + "/build/zephyr/zephyr_pre0.map")
		o.addf(": && ccache %s/bin/arm-none-eabi-gcc  -gdwarf-4 zephyr/CMakeFiles/zephyr_pre0.dir/misc/empty_file.c.obj -o zephyr/zephyr_pre0.elf  -fuse-ld=bfd  -T  zephyr/linker_zephyr_pre0.cmd  -Wl,-Map=%s/build/zephyr/zephyr_pre0.map  -Wl,--whole-archive  app/libapp.a  zephyr/libzephyr.a  zephyr/arch/common/libarch__common.a  -Wl,--no-whole-archive  -Wl,--gc-sections  -Wl,--build-id=none  -Wl,--sort-common=descending  -Wl,--sort-section=alignment  -mcpu=cortex-m4  -mthumb  -mabi=aapcs  -mfp16-format=ieee  -L%s/lib/gcc/arm-none-eabi/13.2.1/thumb/v7e-m/nofp  -lgcc  -lc && cd %s/build/zephyr && /usr/bin/cmake -E true", armGcc, fwApp, armGcc, fwApp)
		ld := armGcc + "/bin/../lib/gcc/arm-none-eabi/13.2.1/../../../../arm-none-eabi/bin/ld.bfd"
		region := g.pick([]string{"FLASH", "RAM"})
		sect := map[string]string{"FLASH": "text", "RAM": "noinit"}[region]
		if g.chance(0.5) {
			o.failf("%s: zephyr/zephyr_pre0.elf section `%s' will not fit in region `%s'", ld, sect, region)
		}
		o.failf("%s: region `%s' overflowed by %d bytes", ld, region, g.between(40, 9000))
		o.fail("collect2: error: ld returned 1 exit status")
	case 1, 2: // undefined reference
		f := g.pick(firmware.files)
		o.addf("[%d/%d] Linking C executable zephyr/zephyr_pre0.elf", stop, total)
		o.fail("FAILED: zephyr/zephyr_pre0.elf zephyr/zephyr_pre0.map " + fwApp + "/build/zephyr/zephyr_pre0.map")
		ld := armGcc + "/bin/../lib/gcc/arm-none-eabi/13.2.1/../../../../arm-none-eabi/bin/ld.bfd"
		for range g.between(2, 3) {
			fn := stem(f) + "_" + g.pick(words) + "_" + g.pick(words)
			o.failf("%s: app/libapp.a(%s.obj): in function `%s':", ld, path.Base(f), fn)
			l := g.site(opsgen.ErrorLine, f)
			o.failf("%s/%s:%d:(.text.%s+0x%x): undefined reference to `%s_%s'", root, f, l, fn, g.between(4, 400), g.pick([]string{"cbor_frame", "uplink", "ringbuf_store", "power_mgmt"}), g.pick(words))
		}
		o.fail("collect2: error: ld returned 1 exit status")
	default: // compiler errors
		f := g.pick(firmware.files)
		o.addf("[%d/%d] Building C object CMakeFiles/app.dir/%s.obj", stop, total, strings.TrimPrefix(f, "firmware/app/"))
		o.failf("FAILED: CMakeFiles/app.dir/%s.obj", strings.TrimPrefix(f, "firmware/app/"))
		o.addf("ccache %s/bin/arm-none-eabi-gcc -DKERNEL -DK_HEAP_MEM_POOL_SIZE=0 -DNRF52840_XXAA -D__PROGRAM_START -D__ZEPHYR__=1 -I%s/include -I%s/build/zephyr/include/generated -isystem %s/lib/libc/common/include -Os -std=c99 -Wall -Wformat -Werror=implicit-int -mcpu=cortex-m4 -mthumb -c %s/%s", armGcc, zephyrBase, fwApp, zephyrBase, root, f)
		fn := stem(f) + "_" + g.pick(words) + "_" + g.pick(words)
		o.failf("%s/%s: In function '%s':", root, f, fn)
		for range g.between(2, 3) {
			l := g.site(opsgen.ErrorLine, f)
			col := g.between(5, 30)
			var msg, src string
			switch g.r.IntN(4) {
			case 0:
				sym := g.pick([]string{"nrf_power_system_off", "pm_state_force", "sensor_attr_set_u32", "bt_le_adv_update_data"})
				msg = fmt.Sprintf("error: implicit declaration of function '%s' [-Wimplicit-function-declaration]", sym)
				src = sym + "(" + map[string]string{"nrf_power_system_off": "NRF_POWER", "pm_state_force": "0u, &(struct pm_state_info){PM_STATE_SOFT_OFF, 0, 0}", "sensor_attr_set_u32": "dev, SENSOR_CHAN_ALL, SENSOR_ATTR_SAMPLING_FREQUENCY, 26", "bt_le_adv_update_data": "ad, ARRAY_SIZE(ad), NULL, 0"}[sym] + ");"
			case 1:
				sym := "CONFIG_MOORHEN_" + strings.ToUpper(g.pick(words)) + "_" + g.pick([]string{"SLOTS", "MAX", "MS"})
				msg = fmt.Sprintf("error: '%s' undeclared (first use in this function)", sym)
				src = "static uint8_t buf[" + sym + "];"
			case 2:
				member := g.pick(words) + "_" + g.pick(words)
				msg = fmt.Sprintf("error: 'struct %s_ctx' has no member named '%s'", stem(f), member)
				src = "ctx->" + member + " = 0;"
			default:
				msg = "error: passing argument 2 of 'zcbor_uint32_put' makes integer from pointer without a cast [-Wint-conversion]"
				src = "zcbor_uint32_put(zs, &hdr->seq);"
			}
			o.failf("%s/%s:%d:%d: %s", root, f, l, col, msg)
			o.addf("  %d |         %s\n      |         %s", l, src, strings.Repeat("^", min(len(src)-1, 24)))
		}
		o.add("ninja: build stopped: subcommand failed.")
	}
	if strings.Contains(o.lines[len(o.lines)-1], "collect2") {
		o.add("ninja: build stopped: subcommand failed.")
	}
	o.failf("FATAL ERROR: command exited with status 1: /usr/bin/cmake --build %s/build", fwApp)
	return g.westCmd(b, pristine), o
}

type scenario struct{ dir, name string }

var scenarios = []scenario{
	{"tests/ringbuf", "moorhen.ringbuf.wrap"}, {"tests/ringbuf", "moorhen.ringbuf.persist"},
	{"tests/cbor", "moorhen.cbor.frame"}, {"tests/cbor", "moorhen.cbor.limits"},
	{"tests/uplink", "moorhen.uplink.batch"}, {"tests/uplink", "moorhen.uplink.retry"},
	{"tests/power", "moorhen.power.ship_mode"}, {"tests/power", "moorhen.power.brownout"},
}

var ztestCases = []string{"test_wrap_preserves_order", "test_put_get_roundtrip", "test_empty_get", "test_header_size",
	"test_seq_monotonic", "test_batch_limit", "test_backoff_caps", "test_wake_reason", "test_persist_reload", "test_crc_matches",
	"test_encode_position", "test_encode_reading", "test_drop_oldest"}

var twisterPlatforms = []string{"qemu_cortex_m3", "native_sim", "nrf52840dk/nrf52840", "nucleo_l476rg"}

func (g *gen) twisterHead(o *out) {
	o.add("ZEPHYR_BASE unset, using \"" + zephyrBase + "\"")
	o.addf("Renaming output directory to %s/twister-out.%d", root+"/firmware", g.between(1, 9))
	o.add("INFO    - Using Ninja..\nINFO    - Zephyr version: v3.7.0\nINFO    - Using 'gnuarmemb' toolchain.")
	o.addf("INFO    - Building initial testsuite list...\nINFO    - Writing JSON report %s/firmware/twister-out/testplan.json\n", root)
	o.addf("Device testing on:\n\n| Platform       | ID   | Serial device   |\n|----------------|------|-----------------|\n\nINFO    - JOBS: 2\nINFO    - Adding tasks to the queue...\nINFO    - Added initial list of jobs to queue")
}

// twisterCmd is how the agent runs twister.
func twisterCmd(inline bool) string {
	c := "cd firmware && west twister -T tests -p qemu_cortex_m3 -p native_sim -p nrf52840dk/nrf52840 --build-only-platform nrf52840dk/nrf52840"
	if inline {
		c += " --inline-logs"
	}
	return c
}

// twisterPass is a twister run in which every scenario passes.
func (g *gen) twisterPass(verbose bool) (string, *out) {
	o := &out{}
	g.twisterHead(o)
	k, total := 0, len(scenarios)*3
	cases := 0
	for _, s := range scenarios {
		for _, p := range twisterPlatforms[:3] {
			k++
			if p == "nrf52840dk/nrf52840" {
				o.addf("INFO    - %3d/%d %-22s %-38s NOT RUN (build)", k, total, p, s.dir+"/"+s.name)
				continue
			}
			o.addf("INFO    - %3d/%d %-22s %-38s PASSED (%s %.3fs)", k, total, p, s.dir+"/"+s.name, map[bool]string{true: "qemu", false: "native"}[p == "qemu_cortex_m3"], g.secs(0.3, 4))
			n := g.between(3, 9)
			cases += n
			if verbose {
				for range n {
					o.addf("DEBUG   -   %s.%s PASS in %.3f seconds", s.name, g.pick(ztestCases), g.secs(0.001, 0.05))
				}
			}
		}
	}
	o.addf("\nINFO    - %d test scenarios (%d configurations) selected, 0 configurations filtered (0 by static filter, 0 at runtime).", len(scenarios), total)
	o.addf("INFO    - %d of %d executed test configurations passed (100.00%%), 0 built (not run), 0 failed, 0 errored, with no warnings in %.2f seconds.", total*2/3, total*2/3, g.secs(40, 200))
	o.addf("INFO    - %d of %d executed test cases passed (100.00%%) on 2 out of total 841 platforms (0.24%%).", cases, cases)
	o.addf("INFO    - %d selected test cases not executed: %d skipped, %d filtered, 0 not run (built only).", cases/2, 0, cases/2)
	o.addf("INFO    - %d test configurations executed on platforms, %d test configurations were only built.", total*2/3, total/3)
	o.addf("INFO    - Saving reports...\nINFO    - Writing JSON report %s/firmware/twister-out/twister.json\nINFO    - Writing xunit report %s/firmware/twister-out/twister.xml...\nINFO    - Writing xunit report %s/firmware/twister-out/twister_report.xml...", root, root, root)
	o.add("INFO    - Run completed")
	return twisterCmd(false), o
}

// twisterFail is a twister run with a failing test case, its log inline
// or not; when not, it returns the path of the handler log to read.
func (g *gen) twisterFail() (string, *out, string) {
	o := &out{}
	inline := g.chance(0.75)
	g.twisterHead(o)
	bad := scenarios[g.r.IntN(len(scenarios))]
	testFile := "firmware/" + bad.dir + "/src/" + path.Base(bad.dir) + "_suite.c"
	k, total := 0, len(scenarios)*3
	var failCase, failSite string
	for _, s := range scenarios {
		for _, p := range twisterPlatforms[:3] {
			k++
			switch {
			case p == "nrf52840dk/nrf52840":
				o.addf("INFO    - %3d/%d %-22s %-38s NOT RUN (build)", k, total, p, s.dir+"/"+s.name)
			case s == bad && p == "qemu_cortex_m3":
				o.failf("ERROR   - %3d/%d %-22s %-38s FAILED : Failed (qemu %.3fs)", k, total, p, s.dir+"/"+s.name, g.secs(1, 6))
				o.failf("ERROR   - see: %s/firmware/twister-out/%s/%s/%s/handler.log", root, p, s.dir, s.name)
				if inline {
					o.add("*** Booting Zephyr OS build v3.7.0 ***\nRunning TESTSUITE " + strings.ReplaceAll(strings.TrimPrefix(s.name, "moorhen."), ".", "_"))
					o.add("===================================================================")
					for range g.between(2, 5) {
						c := g.pick(ztestCases)
						o.addf("START - %s\n PASS - %s in %.3f seconds\n===================================================================", c, c, g.secs(0.001, 0.03))
					}
					failCase = g.E("test", func() string {
						return fmt.Sprintf("test_%s_%s_%s", g.pick(words), g.pick([]string{"after", "across", "under", "during"}), g.pick([]string{"brownout", "wraparound", "reboot", "clock_skew", "partial_drain", "slot_reuse"}))
					})
					o.failf("START - %s", failCase)
					l := g.site(opsgen.ErrorLine, testFile)
					failSite = fmt.Sprintf("WEST_TOPDIR/moorhen/%s:%d", testFile, l)
					o.failf("\n    Assertion failed at %s: %s_%s: (%s == %s is false)", failSite, strings.ReplaceAll(strings.TrimPrefix(s.name, "moorhen."), ".", "_"), failCase, g.pick(words)+"."+g.pick(words), "expected_"+g.pick(words))
					o.failf("%s %d != %d (frame %s)", g.pick(words), g.between(100, 900), g.between(100, 900), g.E("id", g.hexf(8)))
					o.failf(" FAIL - %s in %.3f seconds", failCase, g.secs(0.001, 0.05))
					o.add("===================================================================")
					o.addf("TESTSUITE %s failed.\n", strings.ReplaceAll(strings.TrimPrefix(s.name, "moorhen."), ".", "_"))
					o.add("------ TESTSUITE SUMMARY START ------\n")
					o.failf("SUITE FAIL -  %.2f%% [%s]: pass = %d, fail = 1, skip = 0, total = %d duration = %.3f seconds", g.secs(60, 95), strings.ReplaceAll(strings.TrimPrefix(s.name, "moorhen."), ".", "_"), g.between(2, 8), g.between(3, 9), g.secs(0.01, 0.2))
					o.add("\n------ TESTSUITE SUMMARY END ------\n\n===================================================================\nPROJECT EXECUTION FAILED")
				}
			default:
				o.addf("INFO    - %3d/%d %-22s %-38s PASSED (%s %.3fs)", k, total, p, s.dir+"/"+s.name, map[bool]string{true: "qemu", false: "native"}[p == "qemu_cortex_m3"], g.secs(0.3, 4))
			}
		}
	}
	o.addf("\nINFO    - %d test scenarios (%d configurations) selected, 0 configurations filtered (0 by static filter, 0 at runtime).", len(scenarios), total)
	o.failf("INFO    - %d of %d executed test configurations passed (%.2f%%), 0 built (not run), 1 failed, 0 errored, with no warnings in %.2f seconds.", total*2/3-1, total*2/3, 100*float64(total*2/3-1)/float64(total*2/3), g.secs(40, 200))
	o.addf("INFO    - Saving reports...\nINFO    - Writing JSON report %s/firmware/twister-out/twister.json", root)
	o.add("INFO    - -+" + strings.Repeat("-", 60))
	o.fail("INFO    - The following issues were found (showing the top 10 items):")
	o.failf("INFO    - 1) %s/%s on qemu_cortex_m3 failed (Failed)", bad.dir, bad.name)
	o.add("INFO    -\nINFO    - To rerun the tests, call twister using the following commandline:\nINFO    - west twister -p <PLATFORM> -s <TEST ID>, for example:\nINFO    -")
	o.addf("INFO    - west twister -p qemu_cortex_m3 -s %s/%s", bad.dir, bad.name)
	o.add("INFO    - or with west:\nINFO    - west build -p -b qemu_cortex_m3 " + bad.dir + " -T " + bad.name + "\nINFO    - -+" + strings.Repeat("-", 60))
	o.add("INFO    - Run completed")
	if inline {
		return twisterCmd(true), o, ""
	}
	return twisterCmd(false), o, fmt.Sprintf("firmware/twister-out/qemu_cortex_m3/%s/%s/handler.log", bad.dir, bad.name)
}

// handlerLog is a ztest handler log read after the run: a failing case
// among passing ones, with nothing planted (it is a read).
func (g *gen) handlerLog() string {
	o := &out{}
	suite := g.pick([]string{"ringbuf_wrap", "cbor_frame", "uplink_batch", "power_ship_mode"})
	o.addf("SeaBIOS (version rel-1.16.3-0-ga6ed6b701f0a-prebuilt.qemu.org)\n*** Booting Zephyr OS build v3.7.0 ***\nRunning TESTSUITE %s\n===================================================================", suite)
	for range g.n(3, 10) {
		c := g.pick(ztestCases)
		o.addf("START - %s\n PASS - %s in %.3f seconds\n===================================================================", c, c, g.secs(0.001, 0.05))
	}
	c := g.pick(ztestCases)
	f := "firmware/tests/" + strings.SplitN(suite, "_", 2)[0] + "/src/" + strings.SplitN(suite, "_", 2)[0] + "_suite.c"
	o.addf("START - %s\n\n    Assertion failed at WEST_TOPDIR/moorhen/%s:%d: %s_%s: (ctx.count == %d is false)\nrecord %s dropped", c, f, g.lineFor(f), suite, c, g.between(2, 64), g.hex(8))
	o.addf(" FAIL - %s in %.3f seconds\n===================================================================\nTESTSUITE %s failed.\n\n------ TESTSUITE SUMMARY START ------\n", c, g.secs(0.001, 0.05), suite)
	o.addf("SUITE FAIL -  %.2f%% [%s]: pass = %d, fail = 1, skip = 0, total = %d duration = %.3f seconds", g.secs(60, 95), suite, g.between(3, 9), g.between(4, 10), g.secs(0.01, 0.3))
	o.add("\n------ TESTSUITE SUMMARY END ------\n\n===================================================================\nPROJECT EXECUTION FAILED\n")
	return o.String()
}

// faultRun boots the firmware under QEMU or Renode until it faults and
// the timeout kills it (exit 124). It also returns the faulting pc, which
// it does not label (the agent resolves it with addr2line), and the ELF
// it ran.
func (g *gen) faultRun() (string, *out, string, string) {
	o := &out{}
	renode := g.chance(0.5)
	var cmd string
	if renode {
		cmd = "cd firmware && timeout 60 renode --disable-xwt --console -e 'include @renode/moorhen_tag.resc; start' 2>&1 | tail -n 80"
		o.add("09:14:03.1842 [INFO] Loaded monitor commands from: /opt/renode/scripts/monitor.py\n09:14:03.3911 [INFO] Including script: " + root + "/firmware/renode/moorhen_tag.resc")
		o.add("09:14:03.4410 [INFO] System bus created.\n09:14:04.0106 [INFO] sysbus: Loaded SVD: /opt/renode/platforms/cpus/svd/nrf52840.svd. Name: nrf52840. Description: nRF52840 reference description for radio MCU with ARM 32-bit Cortex-M4 Microcontroller .")
		o.add("09:14:04.2013 [INFO] sysbus: Loading segment of 198876 bytes length at 0x0.\n09:14:04.2207 [INFO] cpu: Setting initial values: PC = 0x2d0d, SP = 0x20006e40.\n09:14:04.2411 [INFO] moorhen_tag: Machine started.")
	} else {
		cmd = "cd firmware && west build -b qemu_cortex_m3 app -p -d build-qemu >/dev/null && timeout 30 west build -d build-qemu -t run"
		o.add("-- west build: running target run\n[0/1] To exit from QEMU enter: 'CTRL+a, x'[QEMU] CPU: cortex-m3")
	}
	t := 0.0
	stamp := func() string {
		t += g.secs(0.001, 0.4)
		s := int(t)
		return fmt.Sprintf("[00:00:%02d.%03d,%03d]", s, int((t-float64(s))*1000), g.between(0, 999))
	}
	prefix := ""
	if renode {
		prefix = "09:14:0" + fmt.Sprint(g.between(4, 9)) + ".0000 [INFO] uart0: "
	}
	o.addf("%s*** Booting Zephyr OS build v3.7.0 ***", prefix)
	o.addf("%s%s <inf> main: moorhen-node 2.%d.%d (%s) starting", prefix, stamp(), g.between(10, 19), g.between(0, 9), boards[g.r.IntN(len(boards))].qual)
	for range g.n(6, 24) {
		o.addf("%s%s <%s> %s: %s", prefix, stamp(), g.pick([]string{"inf", "inf", "dbg", "wrn"}), g.pick([]string{"uplink", "gnss_ubx", "imu_lsm6", "ringbuf_store", "power_mgmt", "ble_adv"}),
			g.fill(g.pick([]string{"{w} seq={n} len={n}", "fix acquired hdop=1.{n} sats={n}", "queued {n} records ({n} free)", "adv started interval={n}0ms", "wake reason {w}", "flush scheduled in {n}s"})))
	}
	thread := g.pick([]string{"uplink_wq", "sysworkq", "gnss_rx", "main", "imu_poll"})
	pfx := func(s string) string { return prefix + stamp() + " <err> os: " + s }
	kind := g.pick([]string{"BUS FAULT", "USAGE FAULT", "MPU FAULT"})
	o.fail(pfx("***** HARD FAULT *****"))
	o.fail(pfx("  Fault escalation (see below)"))
	o.fail(pfx("***** " + kind + " *****"))
	switch kind {
	case "BUS FAULT":
		o.fail(pfx("  Precise data bus error"))
		o.fail(pfx("  BFAR Address: " + g.E("id", func() string { return g.addr("ram") })))
	case "USAGE FAULT":
		o.fail(pfx("  " + g.pick([]string{"Unaligned memory access", "Attempt to execute undefined instruction", "Division by zero"})))
	default:
		o.fail(pfx("  Data Access Violation"))
		o.fail(pfx("  MMFAR Address: " + g.E("id", func() string { return g.addr("ram") })))
	}
	pc := g.addr("flash")
	o.fail(pfx(fmt.Sprintf("r0/a1:  0x%08x  r1/a2:  0x%08x  r2/a3:  0x%08x", g.r.Uint32(), g.r.Uint32()&0xffff, 0)))
	o.fail(pfx(fmt.Sprintf("r3/a4:  0x%08x r12/ip:  0x%08x r14/lr:  %s", g.r.Uint32(), 0, g.E("id", func() string { return g.addr("flash") }))))
	o.fail(pfx(" xpsr:  0x61000000"))
	o.fail(pfx("Faulting instruction address (r15/pc): " + pc))
	o.fail(pfx(fmt.Sprintf(">>> ZEPHYR FATAL ERROR %d: Unknown error on CPU 0", g.pick2(25, 0))))
	o.fail(pfx(fmt.Sprintf("Current thread: 0x%s (%s)", g.E("id", func() string { return "2000" + g.chars(hexDigits, 4) }), thread)))
	o.fail(pfx("Halting system"))
	if renode {
		o.add("09:15:03.0001 [INFO] moorhen_tag: Machine paused.")
		o.fail("Renode was terminated by timeout (60 s)")
	} else {
		o.failf("qemu-system-arm: terminating on signal 15 from pid %d (timeout)", g.between(2000, 90000))
	}
	elf := "build/zephyr/zephyr.elf"
	if !renode {
		elf = "build-qemu/zephyr/zephyr.elf"
	}
	return cmd, o, pc, elf
}

func (g *gen) pick2(a, b int) int {
	if g.chance(0.5) {
		return a
	}
	return b
}

// addr2line resolves a pc to a function and a line of file f.
func (g *gen) addr2line(pc, elf, f string) (string, *out, int) {
	o := &out{}
	l := g.site(opsgen.PassingOutput, f)
	o.addf("%s_%s_%s\n%s/%s:%d", stem(f), g.pick(words), g.pick(words), root, f, l)
	if g.chance(0.6) {
		f2 := g.pick(firmware.files)
		o.addf(" (inlined by) %s_%s at %s/%s:%d", stem(f2), g.pick(words), root, f2, g.lineFor(f2))
	}
	return fmt.Sprintf("cd firmware && %s/bin/arm-none-eabi-addr2line -e %s -f -i -C %s", armGcc, elf, pc), o, l
}

// westFlash flashes a board and reads its boot log over RTT.
func (g *gen) westFlash(b board) (string, *out) {
	o := &out{}
	o.add("-- west flash: rebuilding\nninja: no work to do.")
	if strings.HasPrefix(b.soc, "nrf") {
		o.addf("-- west flash: using runner nrfutil\n-- runners.nrfutil: reset after flashing requested\n-- runners.nrfutil: Flashing file: %s/build/zephyr/zephyr.hex", fwApp)
		sn := g.P("id", func() string { return fmt.Sprintf("%09d", g.between(100000000, 999999999)) })
		for _, s := range []string{"Erase file - Done erasing", "Program file - Done programming", "Verify file - Done verifying"} {
			o.addf("[00:00:0%d] ###### 100%% [%s] %s", g.between(1, 4), sn, s)
		}
		o.add("-- runners.nrfutil: Board(s) with serial number(s) flashed successfully.")
	} else {
		o.add("-- west flash: using runner openocd\nOpen On-Chip Debugger 0.12.0\nLicensed under GNU GPL v2\nInfo : The selected transport took over low-level target control.")
		o.addf("Info : STLINK V2J45M31 (API v2) VID:PID 0483:374B\nInfo : Target voltage: 3.24%d\nInfo : [stm32l4x.cpu] Cortex-M4 r0p1 processor detected", g.between(0, 9))
		o.addf("Info : device idcode = 0x10076415 (STM32L47/L48xx - Rev 4 : 0x1007)\nInfo : flash size = 1024 KiB\nwrote %d bytes from file %s/build/zephyr/zephyr.hex in %.6fs", g.between(150000, 300000), fwApp, g.secs(3, 9))
		o.add("** Programming Finished **\n** Verify Started **\n** Verified OK **\n** Resetting Target **\nshutdown command invoked")
	}
	o.addf("\n$ JLinkRTTLogger -Device %s -If SWD -Speed 4000 -RTTChannel 0 /dev/stdout (first 15 s)", strings.ToUpper(b.soc))
	o.add("*** Booting Zephyr OS build v3.7.0 ***")
	o.addf("[00:00:00.004,211] <inf> main: moorhen-node 2.%d.%d starting, hw rev %c, EUI %s", g.between(10, 19), g.between(0, 9), 'A'+rune(g.between(0, 3)),
		g.P("id", func() string {
			return strings.ToUpper(strings.Join([]string{g.chars(hexDigits, 2), g.chars(hexDigits, 2), g.chars(hexDigits, 2), g.chars(hexDigits, 2), g.chars(hexDigits, 2), g.chars(hexDigits, 2)}, ":"))
		}))
	for range g.n(5, 18) {
		o.addf("[00:00:%02d.%03d,%03d] <inf> %s: %s", g.between(0, 14), g.between(0, 999), g.between(0, 999), g.pick([]string{"uplink", "gnss_ubx", "ble_adv", "power_mgmt"}), g.fill(g.pick([]string{"queued {n} records", "adv started interval={n}0ms", "battery {n}00 mV", "fix acquired sats={n}"})))
	}
	o.addf("[00:00:1%d.%03d,000] <inf> uplink: joined gateway, session %s", g.between(0, 4), g.between(0, 999), g.P("id", func() string { return g.prefixed("ses", "_", 12) }))
	return "cd firmware && west flash -d build && timeout 15 JLinkRTTLogger -Device " + strings.ToUpper(b.soc) + " -If SWD -Speed 4000 -RTTChannel 0 /dev/stdout", o
}
