package moorgen

import (
	"fmt"
	"path"
	"strings"

	"github.com/strata-memory/strata/compact/internal/opsgen"
)

// The Spring Boot device registry: Maven builds, Surefire and Failsafe
// reports, JUnit 5 failures, Java stack traces, Testcontainers, Flyway and
// Spring Boot startup logs.

const regVersion = "1.9.2-SNAPSHOT"

func (g *gen) springTS() string {
	return g.tick(0, 1).Format("2006-01-02T15:04:05.000Z07:00")
}

// springLog pairs the loggers of a Spring Boot start with what they say.
var springLog = [][2]string{
	{"o.s.b.w.embedded.tomcat.TomcatWebServer", "Tomcat initialized with port 8080 (http)"},
	{"o.apache.catalina.core.StandardService", "Starting service [Tomcat]"},
	{"o.apache.catalina.core.StandardEngine", "Starting Servlet engine: [Apache Tomcat/10.1.30]"},
	{"o.a.c.c.C.[Tomcat].[localhost].[/]", "Initializing Spring embedded WebApplicationContext"},
	{"w.s.c.ServletWebServerApplicationContext", "Root WebApplicationContext: initialization completed in {n}7 ms"},
	{"com.zaxxer.hikari.HikariDataSource", "HikariPool-1 - Starting..."},
	{"com.zaxxer.hikari.pool.HikariPool", "HikariPool-1 - Added connection org.mariadb.jdbc.Connection@{h}"},
	{"com.zaxxer.hikari.HikariDataSource", "HikariPool-1 - Start completed."},
	{"o.f.core.internal.command.DbValidate", "Successfully validated {n} migrations (execution time 00:00.0{n}s)"},
	{"o.f.core.internal.command.DbMigrate", "Current version of schema `test`: {n}"},
	{"o.f.core.internal.command.DbMigrate", "Schema `test` is up to date. No migration necessary."},
	{"o.hibernate.jpa.internal.util.LogHelper", "HHH000204: Processing PersistenceUnitInfo [name: default]"},
	{"org.hibernate.Version", "HHH000412: Hibernate ORM core version 6.5.3.Final"},
	{"o.h.e.t.j.p.i.JtaPlatformInitiator", "HHH000489: No JTA platform available (set 'hibernate.transaction.jta.platform' to enable JTA platform integration)"},
	{"j.LocalContainerEntityManagerFactoryBean", "Initialized JPA EntityManagerFactory for persistence unit 'default'"},
	{"o.s.b.a.e.web.EndpointLinksResolver", "Exposing {n} endpoints beneath base path '/actuator'"},
	{"c.b.m.r.config.MqttBridgeConfig", "mqtt bridge disabled (moorhen.mqtt.enabled=false)"},
	{"c.b.m.registry.lease.LeaseManager", "lease sweeper scheduled every {n}s"},
	{"c.b.m.r.provisioning.ProvisioningListener", "subscribed to moorhen/v2/+/{w}/provision (qos 1)"},
	{"o.s.d.r.c.RepositoryConfigurationDelegate", "Finished Spring Data repository scanning in {n} ms. Found {n} JPA repository interfaces."},
	{"o.s.b.d.a.OptionalLiveReloadServer", "LiveReload server is running on port 35729"},
}

func (g *gen) springLine(o *out, level, logger, msg string) {
	if g.pid == 0 {
		g.pid = g.between(1000, 90000)
	}
	o.addf("%s %5s %d --- [moorhen-registry] [%15s] %-40.40s : %s", g.springTS(), level, g.pid, g.pick([]string{"main", "main", "main", "task-1", "scheduling-1"}), logger, msg)
}

func (g *gen) springNoise(o *out, n int) {
	for range n {
		l := springLog[g.r.IntN(len(springLog))]
		msg := strings.ReplaceAll(g.fill(l[1]), "{h}", g.chars(hexDigits, 8))
		g.springLine(o, g.pick([]string{"INFO", "INFO", "INFO", "INFO", "INFO", "INFO", "DEBUG", "WARN"}), l[0], msg)
	}
}

func (g *gen) banner(o *out) {
	o.add("\n  .   ____          _            __ _ _\n /\\\\ / ___'_ __ _ _(_)_ __  __ _ \\ \\ \\ \\\n( ( )\\___ | '_ | '_| | '_ \\/ _` | \\ \\ \\ \\\n \\\\/  ___)| |_)| | | | | || (_| |  ) ) ) )\n  '  |____| .__|_| |_|_| |_\\__, | / / / /\n =========|_|==============|___/=/_/_/_/\n\n :: Spring Boot ::                (v3.3.4)\n")
}

// containers prints what Testcontainers logs when it starts MariaDB and
// Mosquitto for a test class; ids and the JDBC URL are planted.
func (g *gen) containers(o *out) {
	ts := func() string { return g.tick(0, 1).Format("15:04:05.000") }
	if g.chance(0.4) {
		o.addf("%s [main] INFO org.testcontainers.images.PullPolicy -- Image pull policy will be performed by: DefaultPullPolicy()", ts())
		o.addf("%s [main] INFO org.testcontainers.DockerClientFactory -- Connected to docker:\n  Server Version: 26.1.4\n  API Version: 1.45\n  Operating System: Debian GNU/Linux 12 (bookworm)\n  Total Memory: 15731 MB", ts())
		o.addf("%s [main] INFO tc.testcontainers/ryuk:0.7.0 -- Container testcontainers/ryuk:0.7.0 started in PT0.%dS", ts(), g.between(300, 999))
		o.addf("%s [main] INFO org.testcontainers.utility.RyukResourceReaper -- Ryuk started - will monitor and terminate Testcontainers containers on JVM exit", ts())
	}
	for _, img := range []string{"mariadb:11.4", "eclipse-mosquitto:2.0.18"} {
		if img != "mariadb:11.4" && g.chance(0.5) {
			continue
		}
		o.addf("%s [main] INFO tc.%s -- Creating container for image: %s", ts(), img, img)
		o.addf("%s [main] INFO tc.%s -- Container %s is starting: %s", ts(), img, img, g.P("hash", g.hexf(64)))
		o.addf("%s [main] INFO tc.%s -- Container %s started in PT%d.%dS", ts(), img, img, g.between(1, 6), g.between(100, 999))
		if img == "mariadb:11.4" {
			o.addf("%s [main] INFO tc.%s -- Container is started (JDBC URL: %s)", ts(), img, g.P("url", func() string { return fmt.Sprintf("jdbc:mariadb://localhost:%d/test", g.port()) }))
		}
	}
}

func (g *gen) mvnHead(o *out) {
	o.add("[INFO] Scanning for projects...\n[INFO] \n[INFO] ----------------< com.brackwater.moorhen:moorhen-registry >----------------")
	o.addf("[INFO] Building moorhen-registry %s\n[INFO]   from pom.xml\n[INFO] --------------------------------[ jar ]---------------------------------", regVersion)
	o.add("[INFO] \n[INFO] --- resources:3.3.1:resources (default-resources) @ moorhen-registry ---")
	o.addf("[INFO] Copying 3 resources from src/main/resources to target/classes\n[INFO] Copying %d resources from src/main/resources to target/classes", g.between(14, 22))
	o.add("[INFO] \n[INFO] --- compiler:3.13.0:compile (default-compile) @ moorhen-registry ---\n[INFO] Recompiling the module because of changed source code.")
	o.addf("[INFO] Compiling %d source files with javac [debug parameters release 21] to target/classes", g.between(58, 80))
}

func (g *gen) mvnTestHead(o *out, plugin string) {
	if plugin == "surefire" {
		o.add("[INFO] \n[INFO] --- compiler:3.13.0:testCompile (default-testCompile) @ moorhen-registry ---")
		o.addf("[INFO] Compiling %d source files with javac [debug parameters release 21] to target/test-classes", g.between(20, 34))
		o.add("[INFO] \n[INFO] --- surefire:3.2.5:test (default-test) @ moorhen-registry ---")
	} else {
		o.add("[INFO] \n[INFO] --- jar:3.4.1:jar (default-jar) @ moorhen-registry ---")
		o.addf("[INFO] Building jar: %s/registry/target/moorhen-registry-%s.jar", root, regVersion)
		o.add("[INFO] \n[INFO] --- spring-boot:3.3.4:repackage (repackage) @ moorhen-registry ---\n[INFO] Replacing main artifact with repackaged archive, adding nested dependencies in BOOT-INF/.")
		o.add("[INFO] \n[INFO] --- failsafe:3.2.5:integration-test (default) @ moorhen-registry ---")
	}
	o.add("[INFO] Using auto detected provider org.apache.maven.surefire.junitplatform.JUnitPlatformProvider\n[INFO] \n[INFO] -------------------------------------------------------\n[INFO]  T E S T S\n[INFO] -------------------------------------------------------")
}

func (g *gen) testClasses(it bool) []string {
	var out []string
	for _, f := range registry.tests {
		if strings.HasSuffix(f, "IT.java") == it {
			out = append(out, f)
		}
	}
	return out
}

// classRun prints one passing test class of a verbose run.
func (g *gen) classRun(o *out, f string, quiet bool) int {
	cls := javaClass(f)
	g.pid = g.between(1000, 90000)
	if !quiet {
		o.addf("[INFO] Running %s", cls)
	}
	spring := strings.HasSuffix(f, "IT.java") || g.chance(0.4)
	if spring {
		if strings.HasSuffix(f, "IT.java") || g.chance(0.5) {
			g.containers(o)
		}
		if g.chance(0.4) {
			g.banner(o)
		}
		g.springLine(o, "INFO", "c.b.m.registry."+stem(f), fmt.Sprintf("Starting %s using Java 21.0.4 with PID %d (started by dev in %s/registry)", stem(f), g.pid, root))
		g.springNoise(o, g.n(3, 14))
		g.springLine(o, "INFO", "c.b.m.registry."+stem(f), fmt.Sprintf("Started %s in %.3f seconds (process running for %.3f)", stem(f), g.secs(1, 9), g.secs(5, 20)))
		if g.chance(0.3) {
			g.springLine(o, "INFO", "c.b.m.r.provisioning.ProvisioningListener", fmt.Sprintf("claimed device %s for tenant %s", g.P("uuid", g.uuid), g.pick(depots)))
		}
	}
	n := g.between(3, 24)
	if !quiet {
		o.addf("[INFO] Tests run: %d, Failures: 0, Errors: 0, Skipped: %d, Time elapsed: %.3f s -- in %s", n, g.pick2(0, g.between(0, 2)), g.secs(0.05, 12), cls)
	}
	return n
}

// mvnPass is a passing build: quiet (test output only) or verbose.
func (g *gen) mvnPass() (string, *out) {
	o := &out{}
	quiet := g.chance(0.4)
	if !quiet {
		g.mvnHead(o)
		g.mvnTestHead(o, "surefire")
	}
	total := 0
	for _, f := range g.testClasses(false) {
		total += g.classRun(o, f, quiet)
	}
	if !quiet {
		o.addf("[INFO] \n[INFO] Results:\n[INFO] \n[INFO] Tests run: %d, Failures: 0, Errors: 0, Skipped: %d\n[INFO] ", total, g.between(0, 4))
		g.mvnTestHead(o, "failsafe")
	}
	itTotal := 0
	for _, f := range g.testClasses(true) {
		itTotal += g.classRun(o, f, quiet)
	}
	if quiet {
		return "cd registry && mvn -q verify", o
	}
	o.addf("[INFO] \n[INFO] Results:\n[INFO] \n[INFO] Tests run: %d, Failures: 0, Errors: 0, Skipped: 0\n[INFO] ", itTotal)
	o.add("[INFO] \n[INFO] --- failsafe:3.2.5:verify (default) @ moorhen-registry ---\n[INFO] ------------------------------------------------------------------------\n[INFO] BUILD SUCCESS\n[INFO] ------------------------------------------------------------------------")
	o.addf("[INFO] Total time:  %02d:%02d min\n[INFO] Finished at: %s\n[INFO] ------------------------------------------------------------------------", g.between(0, 2), g.between(0, 59), g.now.Format("2006-01-02T15:04:05Z"))
	return "cd registry && mvn verify", o
}

var junitFrames = []string{"org.junit.jupiter.api.AssertionFailureBuilder.build(AssertionFailureBuilder.java:151)",
	"org.junit.jupiter.api.AssertionFailureBuilder.buildAndThrow(AssertionFailureBuilder.java:132)",
	"org.junit.jupiter.api.AssertEquals.failNotEqual(AssertEquals.java:197)",
	"org.junit.jupiter.api.AssertEquals.assertEquals(AssertEquals.java:182)",
	"org.junit.jupiter.api.Assertions.assertEquals(Assertions.java:1156)"}

var reflectFrames = []string{"java.base/java.lang.reflect.Method.invoke(Method.java:580)",
	"java.base/java.util.ArrayList.forEach(ArrayList.java:1596)", "java.base/java.util.ArrayList.forEach(ArrayList.java:1596)"}

var springFrames = []string{"org.springframework.aop.framework.ReflectiveMethodInvocation.proceed(ReflectiveMethodInvocation.java:184)",
	"org.springframework.transaction.interceptor.TransactionInterceptor$1.proceedWithInvocation(TransactionInterceptor.java:123)",
	"org.springframework.transaction.interceptor.TransactionAspectSupport.invokeWithinTransaction(TransactionAspectSupport.java:392)",
	"org.springframework.transaction.interceptor.TransactionInterceptor.invoke(TransactionInterceptor.java:119)",
	"org.springframework.aop.framework.CglibAopProxy$DynamicAdvisedInterceptor.intercept(CglibAopProxy.java:720)"}

// frame is a project stack frame with a planted site, and its line.
func (g *gen) frame(c opsgen.Class, file, method string) (string, int) {
	l := g.site(c, file)
	return fmt.Sprintf("\tat %s.%s(%s:%d)", javaClass(file), method, path.Base(file), l), l
}

// javaTestName is a fresh test method name, shaped unlike the methods of
// the sources the agent reads.
func (g *gen) javaTestName() string {
	return "should" + g.pick([]string{"Reject", "Keep", "Expire", "Renew", "Publish", "Ignore", "Revoke"}) + g.pick(caps) +
		g.pick([]string{"When", "After", "Before", "Unless"}) + g.pick(caps) + g.pick([]string{"Drifts", "Expires", "IsReplayed", "IsMissing", "Overlaps", "Rotates"})
}

// mvnFail is a failing build: a compile error, a failing assertion, an
// exception in the code under test, a container that does not start, or
// an application context that does not load (Flyway, a missing bean).
func (g *gen) mvnFail() (string, *out) {
	o := &out{}
	kind := g.r.IntN(5)
	quiet := false
	g.mvnHead(o)
	if kind == 0 {
		o.add("[INFO] -------------------------------------------------------------\n[ERROR] COMPILATION ERROR : \n[INFO] -------------------------------------------------------------")
		var sites []string
		for range g.between(2, 3) {
			f := g.pick(registry.files)
			var line, col int
			g.siteForm(opsgen.ErrorLine, f, func(b string, n int) string {
				line, col = n, g.between(9, 60)
				return fmt.Sprintf("%s:[%d,%d]", b, n, col)
			})
			s := fmt.Sprintf("%s/%s:[%d,%d]", root, f, line, col)
			sites = append(sites, s)
			switch g.r.IntN(3) {
			case 0:
				o.failf("[ERROR] %s cannot find symbol\n  symbol:   method %s%s()\n  location: variable %s of type %s.%s", s, g.pick(words), g.pick(caps), g.pick(words), javaPkg, g.pick([]string{"lease.DeviceLease", "device.Device", "channel.ReleaseChannel"}))
			case 1:
				o.failf("[ERROR] %s incompatible types: java.time.Instant cannot be converted to java.time.Duration", s)
			default:
				o.failf("[ERROR] %s method %s in class %s cannot be applied to given types;\n  required: java.util.UUID,java.time.Duration\n  found:    java.util.UUID\n  reason: actual and formal argument lists differ in length", s, g.pick(words), javaClass(g.pick(registry.files)))
			}
		}
		o.failf("[INFO] %d error%s\n[INFO] -------------------------------------------------------------", len(sites), map[bool]string{true: "s", false: ""}[len(sites) > 1])
		o.add("[INFO] ------------------------------------------------------------------------\n[INFO] BUILD FAILURE\n[INFO] ------------------------------------------------------------------------")
		o.addf("[INFO] Total time:  %d.%03d s\n[INFO] Finished at: %s\n[INFO] ------------------------------------------------------------------------", g.between(4, 20), g.between(0, 999), g.now.Format("2006-01-02T15:04:05Z"))
		o.failf("[ERROR] Failed to execute goal org.apache.maven.plugins:maven-compiler-plugin:3.13.0:compile (default-compile) on project moorhen-registry: Compilation failure: Compilation failure: ")
		for _, s := range sites {
			o.failf("[ERROR] %s", s)
		}
		g.mvnHelp(o, "MojoFailureException")
		return "cd registry && mvn verify", o
	}
	it := kind == 3 || kind == 4 && g.chance(0.5)
	if !quiet {
		g.mvnTestHead(o, map[bool]string{true: "failsafe", false: "surefire"}[it])
	}
	classes := g.testClasses(it)
	bad := classes[g.r.IntN(len(classes))]
	cls := javaClass(bad)
	total, fails := 0, 0
	var summary []string
	for _, f := range classes {
		if f != bad {
			total += g.classRun(o, f, quiet)
			continue
		}
		if !quiet {
			o.addf("[INFO] Running %s", cls)
		}
		g.containersMaybe(o, kind)
		n := g.between(4, 20)
		total += n
		fails = 1
		switch kind {
		case 1, 2: // assertion, or an exception from the code under test
			test := g.E("test", g.javaTestName)
			o.failf("[ERROR] Tests run: %d, Failures: %d, Errors: %d, Skipped: 0, Time elapsed: %.3f s <<< FAILURE! -- in %s", n, 2-kind, kind-1, g.secs(0.2, 9), cls)
			o.failf("[ERROR] %s.%s -- Time elapsed: %.3f s <<< %s!", cls, test, g.secs(0.01, 2), map[int]string{1: "FAILURE", 2: "ERROR"}[kind])
			var sum string
			if kind == 1 {
				dev := g.E("uuid", g.uuid)
				want, got := g.pick([]string{"LEASE_EXPIRED", "REVOKED", "PENDING_CLAIM", "STABLE"}), g.pick([]string{"RENEWED", "ACTIVE", "CLAIMED", "BETA"})
				msg := fmt.Sprintf("lease state of device %s ==> expected: <%s> but was: <%s>", dev, want, got)
				if g.chance(0.5) {
					msg = fmt.Sprintf("\nexpected: %s\n but was: %s\nwhen checking channel of %s", want, got, dev)
					o.failf("org.opentest4j.AssertionFailedError: %s", msg)
				} else {
					o.failf("org.opentest4j.AssertionFailedError: %s", msg)
				}
				for _, fr := range junitFrames[:g.between(3, 5)] {
					o.fail("\tat " + fr)
				}
				fr, l := g.frame(opsgen.ErrorLine, bad, test)
				o.fail(fr)
				for _, fr := range reflectFrames[:g.between(1, 3)] {
					o.fail("\tat " + fr)
				}
				sum = fmt.Sprintf("%s.%s:%d %s", stem(bad), test, l, strings.TrimSpace(strings.SplitN(strings.TrimPrefix(msg, "\n"), "\n", 2)[0]))
			} else {
				main := g.pick(registry.files)
				exc := g.pick([]string{"LeaseExpiredException", "DeviceNotFoundException", "InvalidSignatureException", "ClaimTokenReusedException"})
				code := g.E("code", g.codeOf("MHR"))
				o.failf("%s.%s: [%s] %s %s", javaPkg, exc, code, g.pick([]string{"lease", "device", "channel manifest", "claim token"}), g.E("id", func() string { return g.prefixed("lse", "_", 14) }))
				fr, _ := g.frame(opsgen.ErrorLine, main, g.pick(words)+g.pick(caps))
				o.fail(fr)
				for _, fr := range springFrames[:g.between(2, 5)] {
					o.fail("\tat " + fr)
				}
				fr, _ = g.frame(opsgen.ErrorLine, bad, test)
				o.fail(fr)
				for _, fr := range reflectFrames[:g.between(1, 3)] {
					o.fail("\tat " + fr)
				}
				if g.chance(0.6) {
					o.failf("Caused by: java.sql.SQLIntegrityConstraintViolationException: (conn=%d) Duplicate entry '%s' for key 'uk_device_lease_active'", g.between(10, 9000), g.E("uuid", g.uuid))
					o.fail("\tat org.mariadb.jdbc.export.ExceptionFactory.createException(ExceptionFactory.java:306)")
					o.fail("\tat org.mariadb.jdbc.export.ExceptionFactory.create(ExceptionFactory.java:378)")
					o.fail("\t... " + fmt.Sprint(g.between(40, 90)) + " more")
				}
				sum = fmt.Sprintf("%s.%s » %s [%s]", stem(bad), test, strings.TrimSuffix(exc, "Exception"), code)
			}
			summary = append(summary, sum)
		case 3: // a container that does not start
			img := g.pick([]string{"mariadb:11.4", "eclipse-mosquitto:2.0.18"})
			o.failf("[ERROR] Tests run: 1, Failures: 0, Errors: 1, Skipped: 0, Time elapsed: %.3f s <<< FAILURE! -- in %s", g.secs(30, 125), cls)
			o.failf("[ERROR] %s -- Time elapsed: %.3f s <<< ERROR!", cls, g.secs(30, 125))
			o.failf("org.testcontainers.containers.ContainerLaunchException: Container startup failed for image %s", img)
			o.fail("\tat org.testcontainers.containers.GenericContainer.doStart(GenericContainer.java:359)\n\tat org.testcontainers.containers.GenericContainer.start(GenericContainer.java:330)")
			o.fail("\tat org.testcontainers.junit.jupiter.TestcontainersExtension$StoreAdapter.start(TestcontainersExtension.java:280)")
			o.fail("Caused by: org.rnorth.ducttape.RetryCountExceededException: Retry limit hit with exception\n\tat org.rnorth.ducttape.unreliables.Unreliables.retryUntilSuccess(Unreliables.java:88)\n\tat org.testcontainers.containers.GenericContainer.doStart(GenericContainer.java:344)\n\t... 31 more")
			o.fail("Caused by: org.testcontainers.containers.ContainerLaunchException: Could not create/start container\n\tat org.testcontainers.containers.GenericContainer.tryStart(GenericContainer.java:563)")
			if g.chance(0.5) {
				o.failf("\tSuppressed: java.lang.IllegalStateException: Could not connect to Ryuk at %s", g.E("hostport", func() string { return fmt.Sprintf("172.17.0.1:%d", g.port()) }))
			}
			switch g.r.IntN(3) {
			case 0:
				o.failf("Caused by: org.testcontainers.containers.ContainerLaunchException: Timed out waiting for container port to open (localhost ports: [%d] should be listening)", g.port())
				o.failf("\tat org.testcontainers.containers.wait.strategy.HostPortWaitStrategy.waitUntilReady(HostPortWaitStrategy.java:112)\n\t... container %s exited with code 1", g.E("hash", g.hexf(12)))
			case 1:
				o.failf("Caused by: com.github.dockerjava.api.exception.InternalServerErrorException: Status 500: {\"message\":\"driver failed programming external connectivity on endpoint %s: Bind for %s failed: port is already allocated\"}",
					g.E("id", func() string {
						return "sad_" + g.pick([]string{"turing", "hopper", "lovelace", "noether"}) + "_" + g.chars(lowernum, 5)
					}), g.E("hostport", func() string { return fmt.Sprintf("0.0.0.0:%d", g.port()) }))
			default:
				o.failf("Caused by: java.lang.IllegalStateException: Wait strategy failed. Container exited with code 1\n\tat org.testcontainers.containers.GenericContainer.tryStart(GenericContainer.java:533)")
				o.failf("\tContainer log: [ERROR] [Entrypoint]: Database is uninitialized and password option is not specified (container %s)", g.E("hash", g.hexf(12)))
			}
			summary = append(summary, fmt.Sprintf("%s » ContainerLaunch Container startup failed for image %s", stem(bad), img))
		default: // the application context does not load
			o.failf("[ERROR] Tests run: %d, Failures: 0, Errors: %d, Skipped: 0, Time elapsed: %.3f s <<< FAILURE! -- in %s", n, n, g.secs(3, 20), cls)
			test := g.E("test", g.javaTestName)
			o.failf("[ERROR] %s.%s -- Time elapsed: 0.001 s <<< ERROR!", cls, test)
			o.failf("java.lang.IllegalStateException: Failed to load ApplicationContext for [WebMergedContextConfiguration@%s testClass = %s, locations = [], classes = [%s.RegistryApplication]]", g.hex(8), cls, javaPkg)
			o.fail("\tat org.springframework.test.context.cache.DefaultCacheAwareContextLoaderDelegate.loadContext(DefaultCacheAwareContextLoaderDelegate.java:180)\n\tat org.springframework.test.context.support.DefaultTestContext.getApplicationContext(DefaultTestContext.java:130)")
			if g.chance(0.5) {
				o.fail("Caused by: org.springframework.beans.factory.BeanCreationException: Error creating bean with name 'flywayInitializer' defined in class path resource [org/springframework/boot/autoconfigure/flyway/FlywayAutoConfiguration$FlywayConfiguration.class]: Validate failed: Migrations have failed validation")
				v := g.between(9, 30)
				o.failf("Migration checksum mismatch for migration version %d\n-> Applied to database : %s\n-> Resolved locally    : %s", v,
					g.E("id", func() string { return fmt.Sprint(g.between(1000000000, 2100000000)) }), g.E("id", func() string { return fmt.Sprint(-g.between(1000000000, 2100000000)) }))
				o.fail("Either revert the changes to the migration, or run repair to update the schema history.")
				o.add("Need more flexibility with validation rules? Learn more: https://rd.gt/3AbJUZE")
				o.fail("Caused by: org.flywaydb.core.api.exception.FlywayValidateException: Validate failed: Migrations have failed validation\n\tat org.flywaydb.core.Flyway.lambda$migrate$0(Flyway.java:137)\n\t... 87 more")
			} else {
				bean := g.pick(registry.files)
				o.failf("Caused by: org.springframework.beans.factory.UnsatisfiedDependencyException: Error creating bean with name '%s' defined in file [%s/registry/target/classes/%s.class]: Unsatisfied dependency expressed through constructor parameter %d: No qualifying bean of type '%s.channel.ChannelSigner' available: expected at least 1 bean which qualifies as autowire candidate. Dependency annotations: {}",
					strings.ToLower(stem(bean)[:1])+stem(bean)[1:], root, strings.ReplaceAll(javaClass(bean), ".", "/"), g.between(0, 3), javaPkg)
				o.fail("\tat org.springframework.beans.factory.support.ConstructorResolver.createArgumentArray(ConstructorResolver.java:795)\n\t... 84 more")
				o.failf("Caused by: %s.channel.SignerKeyMissingException: no signing key at vault path %s", javaPkg, g.E("path", func() string { return "secret/data/moorhen/channels/" + g.pick(words) + "-" + g.chars(lowernum, 6) }))
			}
			for range n - 1 {
				o.failf("[ERROR] %s.%s -- Time elapsed: 0 s <<< ERROR!\njava.lang.IllegalStateException: ApplicationContext failure threshold (1) exceeded: skipping repeated attempt to load context for [WebMergedContextConfiguration@%s testClass = %s]", cls, g.pick(words)+g.pick(caps)+"Works", g.hex(8), cls)
				o.fail("\tat org.springframework.test.context.cache.DefaultCacheAwareContextLoaderDelegate.loadContext(DefaultCacheAwareContextLoaderDelegate.java:145)")
			}
			summary = append(summary, fmt.Sprintf("%s.%s » IllegalState Failed to load ApplicationContext for [WebMergedContextConfiguration@...]", stem(bad), test))
			fails = n
		}
	}
	o.add("[INFO] \n[INFO] Results:\n[INFO] ")
	label := map[bool]string{true: "Errors", false: "Failures"}[kind != 1]
	o.failf("[ERROR] %s: ", label)
	for _, s := range summary {
		o.failf("[ERROR]   %s", s)
	}
	o.failf("[INFO] \n[ERROR] Tests run: %d, Failures: %d, Errors: %d, Skipped: %d", total, map[bool]int{true: fails, false: 0}[kind == 1], map[bool]int{true: 0, false: fails}[kind == 1], g.between(0, 3))
	o.add("[INFO] \n[INFO] ------------------------------------------------------------------------\n[INFO] BUILD FAILURE\n[INFO] ------------------------------------------------------------------------")
	plugin := map[bool]string{true: "maven-failsafe-plugin:3.2.5:verify (default)", false: "maven-surefire-plugin:3.2.5:test (default-test)"}[it]
	o.failf("[ERROR] Failed to execute goal org.apache.maven.plugins:%s on project moorhen-registry: There are test failures.", plugin)
	o.addf("[ERROR] \n[ERROR] Please refer to %s/registry/target/%s-reports for the individual test results.", root, map[bool]string{true: "failsafe", false: "surefire"}[it])
	o.add("[ERROR] Please refer to dump files (if any exist) [date].dump, [date]-jvmRun[N].dump and [date].dumpstream.")
	g.mvnHelp(o, "MojoFailureException")
	if quiet {
		return "cd registry && mvn -q verify", o
	}
	return "cd registry && mvn verify", o
}

func (g *gen) containersMaybe(o *out, kind int) {
	if kind != 3 && g.chance(0.6) {
		g.containers(o)
		g.banner(o)
		g.springNoise(o, g.n(2, 8))
	}
}

func (g *gen) mvnHelp(o *out, exc string) {
	o.add("[ERROR] -> [Help 1]\n[ERROR] \n[ERROR] To see the full stack trace of the errors, re-run Maven with the -e switch.\n[ERROR] Re-run Maven using the -X switch to enable full debug logging.\n[ERROR] \n[ERROR] For more information about the errors and possible solutions, please read the following articles:")
	o.addf("[ERROR] [Help 1] http://cwiki.apache.org/confluence/display/MAVEN/%s", exc)
}

// registryRun starts the packaged registry locally: it comes up, or it
// fails to start.
func (g *gen) registryRun(ok bool) (string, *out) {
	o := &out{}
	g.pid = g.between(1000, 90000)
	g.banner(o)
	g.springLine(o, "INFO", "c.b.m.registry.RegistryApplication", fmt.Sprintf("Starting RegistryApplication v%s using Java 21.0.4 with PID %d (%s/registry/target/moorhen-registry-%s.jar started by dev in %s/registry)", regVersion, g.pid, root, regVersion, root))
	g.springLine(o, "INFO", "c.b.m.registry.RegistryApplication", "The following 1 profile is active: \"local\"")
	g.springNoise(o, g.n(4, 12))
	if ok {
		g.springLine(o, "INFO", "o.f.core.internal.command.DbMigrate", fmt.Sprintf("Successfully applied %d migrations to schema `moorhen_registry`, now at version v%d (execution time 00:00.%03ds)", g.between(1, 3), g.between(12, 30), g.between(20, 900)))
		port := g.port()
		g.springLine(o, "INFO", "o.s.b.w.embedded.tomcat.TomcatWebServer", fmt.Sprintf("Tomcat started on port %d (http) with context path '/'", port))
		g.springLine(o, "INFO", "c.b.m.r.config.MqttBridgeConfig", "connected to broker "+g.P("url", func() string { return fmt.Sprintf("mqtts://%s", g.hostport()) })+" as "+g.P("id", func() string { return g.prefixed("registry", "-", 8) }))
		g.springLine(o, "INFO", "c.b.m.registry.RegistryApplication", fmt.Sprintf("Started RegistryApplication in %.3f seconds (process running for %.3f)", g.secs(4, 12), g.secs(5, 14)))
		return "cd registry && (java -jar target/moorhen-registry-" + regVersion + ".jar --spring.profiles.active=local > /tmp/registry.log 2>&1 &) && sleep 25 && cat /tmp/registry.log", o
	}
	switch g.r.IntN(2) {
	case 0:
		g.springLine(o, "WARN", "ConfigServletWebServerApplicationContext", "Exception encountered during context initialization - cancelling refresh attempt: org.springframework.context.ApplicationContextException: Failed to start bean 'webServerStartStop'")
		g.springLine(o, "INFO", "o.apache.catalina.core.StandardService", "Stopping service [Tomcat]")
		o.add("\n***************************")
		o.fail("APPLICATION FAILED TO START")
		o.add("***************************\n\nDescription:\n")
		p := g.port()
		o.failf("Web server failed to start. Port %d was already in use.", p)
		o.failf("(caused by java.net.BindException: Address already in use: bind to %s)", g.E("hostport", func() string { return fmt.Sprintf("0.0.0.0:%d", p) }))
		o.add("\nAction:\n\nIdentify and stop the process that's listening on port or configure this application to listen on another port.\n")
	default:
		g.springLine(o, "WARN", "ConfigServletWebServerApplicationContext", "Exception encountered during context initialization - cancelling refresh attempt: org.springframework.beans.factory.UnsatisfiedDependencyException: Error creating bean with name 'mqttBridgeConfig'")
		o.add("\n***************************")
		o.fail("APPLICATION FAILED TO START")
		o.add("***************************\n\nDescription:\n")
		u := g.E("url", func() string {
			return fmt.Sprintf("mqtts://mqtt-broker-%s :%d", g.chars(lowernum, 4), g.port())
		})
		o.failf("Failed to bind properties under 'moorhen.mqtt.broker-url' to java.net.URI:\n\n    Property: moorhen.mqtt.broker-url\n    Value: \"%s\"\n    Origin: class path resource [application-local.yml] - %d:17\n    Reason: failed to convert java.lang.String to java.net.URI (caused by java.net.URISyntaxException: Illegal character in authority at index 8: %s)",
			u, g.between(10, 60), u)
		o.add("\nAction:\n\nUpdate your application's configuration\n")
	}
	return "cd registry && timeout 90 java -jar target/moorhen-registry-" + regVersion + ".jar --spring.profiles.active=local", o
}
