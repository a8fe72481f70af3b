/*
 * AF_UNIX sockets through glibc: socketpair, bind/listen/accept/connect
 * on a path and on an abstract name, stream end of file and EPIPE with
 * SIGPIPE, shutdown, datagrams with their boundaries and source
 * addresses, seqpacket, socket options, FIONREAD, descriptor passing
 * with SCM_RIGHTS, readiness through poll and epoll, and the send buffer
 * charged per packet as Linux charges an skb. A forked child
 * or a thread is the other party where one is needed. The values
 * expected are Linux 6.12's.
 *
 * Output and exit status: check.h's run_tests.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/uio.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

static int reap(pid_t child)
{
	int status = -1;
	waitpid(child, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 100 + WTERMSIG(status);
}

static socklen_t path_addr(struct sockaddr_un *a, const char *path)
{
	memset(a, 0, sizeof(*a));
	a->sun_family = AF_UNIX;
	strcpy(a->sun_path, path);
	return offsetof(struct sockaddr_un, sun_path) + strlen(path) + 1;
}

static socklen_t abstract_addr(struct sockaddr_un *a, const char *name)
{
	memset(a, 0, sizeof(*a));
	a->sun_family = AF_UNIX;
	memcpy(a->sun_path + 1, name, strlen(name));
	return offsetof(struct sockaddr_un, sun_path) + 1 + strlen(name);
}

static volatile sig_atomic_t sigpipes;
static void on_sigpipe(int sig)
{
	(void)sig;
	sigpipes++;
}

static int socketpair_stream_carries_bytes_both_ways(void)
{
	int sv[2];
	int r = socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
	char a[8] = { 0 }, b[8] = { 0 };
	ssize_t w1 = write(sv[0], "ping", 4);
	ssize_t r1 = read(sv[1], a, sizeof(a));
	ssize_t w2 = send(sv[1], "pong!", 5, 0);
	ssize_t r2 = recv(sv[0], b, sizeof(b), 0);
	struct stat st;
	fstat(sv[0], &st);
	close(sv[0]);
	close(sv[1]);
	CHECK(r == 0, "socketpair: %s", strerror(errno));
	CHECK(w1 == 4 && r1 == 4 && !memcmp(a, "ping", 4), "one way: %zd %zd '%s'", w1, r1, a);
	CHECK(w2 == 5 && r2 == 5 && !memcmp(b, "pong!", 5), "the other: %zd %zd '%s'", w2, r2, b);
	CHECK(S_ISSOCK(st.st_mode), "fstat mode %o", st.st_mode);
	return 0;
}

static int stream_reads_eof_after_the_peer_closes(void)
{
	int sv[2];
	socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
	write(sv[0], "bye", 3);
	close(sv[0]);
	char buf[8];
	ssize_t first = read(sv[1], buf, sizeof(buf));
	ssize_t eof = read(sv[1], buf, sizeof(buf));
	struct pollfd p = { sv[1], POLLIN | POLLRDHUP, 0 };
	poll(&p, 1, 0);
	close(sv[1]);
	CHECK(first == 3, "the queued bytes: %zd", first);
	CHECK(eof == 0, "after the close: %zd (%s)", eof, strerror(errno));
	CHECK((p.revents & (POLLIN | POLLHUP | POLLRDHUP)) == (POLLIN | POLLHUP | POLLRDHUP),
	      "poll after the close: %#x", p.revents);
	return 0;
}

static int stream_write_to_closed_peer_is_epipe_and_sigpipe(void)
{
	signal(SIGPIPE, on_sigpipe);
	sigpipes = 0;
	int sv[2];
	socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
	close(sv[1]);
	ssize_t w = write(sv[0], "x", 1);
	int e = errno;
	int after_write = sigpipes;
	ssize_t s = send(sv[0], "x", 1, MSG_NOSIGNAL);
	int es = errno;
	int after_send = sigpipes;
	close(sv[0]);
	signal(SIGPIPE, SIG_DFL);
	CHECK(w == -1 && e == EPIPE, "write: %zd (%s)", w, strerror(e));
	CHECK(after_write == 1, "SIGPIPEs after write: %d", after_write);
	CHECK(s == -1 && es == EPIPE, "send MSG_NOSIGNAL: %zd (%s)", s, strerror(es));
	CHECK(after_send == 1, "MSG_NOSIGNAL still raised SIGPIPE (%d)", after_send);
	return 0;
}

static int shutdown_write_gives_the_peer_eof(void)
{
	int sv[2];
	socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
	int s = shutdown(sv[0], SHUT_WR);
	char buf[4];
	ssize_t eof = read(sv[1], buf, sizeof(buf));
	ssize_t w = send(sv[0], "x", 1, MSG_NOSIGNAL);
	int e = errno;
	ssize_t back = write(sv[1], "ok", 2);
	ssize_t got = read(sv[0], buf, sizeof(buf));
	int bad = shutdown(sv[0], 7);
	int eb = errno;
	close(sv[0]);
	close(sv[1]);
	CHECK(s == 0, "shutdown: %s", strerror(errno));
	CHECK(eof == 0, "the peer's read: %zd", eof);
	CHECK(w == -1 && e == EPIPE, "writing after SHUT_WR: %zd (%s)", w, strerror(e));
	CHECK(back == 2 && got == 2, "the other direction still works: %zd %zd", back, got);
	CHECK(bad == -1 && eb == EINVAL, "how 7: %d (%s)", bad, strerror(eb));
	return 0;
}

static int bind_listen_accept_connect_on_a_path(void)
{
	unlink("/tmp/sock-a");
	mkdir("/tmp", 01777);
	int srv = socket(AF_UNIX, SOCK_STREAM, 0);
	struct sockaddr_un addr;
	socklen_t len = path_addr(&addr, "/tmp/sock-a");
	int b = bind(srv, (struct sockaddr *)&addr, len);
	int l = listen(srv, 4);
	struct stat st;
	int s = stat("/tmp/sock-a", &st);
	pid_t child = fork();
	if (child == 0) {
		int c = socket(AF_UNIX, SOCK_STREAM, 0);
		struct sockaddr_un a;
		socklen_t alen = path_addr(&a, "/tmp/sock-a");
		if (connect(c, (struct sockaddr *)&a, alen) != 0)
			_exit(1);
		struct sockaddr_un peer;
		socklen_t plen = sizeof(peer);
		if (getpeername(c, (struct sockaddr *)&peer, &plen) != 0 || plen != alen ||
		    strcmp(peer.sun_path, "/tmp/sock-a"))
			_exit(2);
		if (write(c, "hello", 5) != 5)
			_exit(3);
		char buf[8];
		if (read(c, buf, sizeof(buf)) != 5 || memcmp(buf, "world", 5))
			_exit(4);
		_exit(0);
	}
	struct sockaddr_un from;
	socklen_t flen = sizeof(from);
	int a = accept(srv, (struct sockaddr *)&from, &flen);
	char buf[8] = { 0 };
	ssize_t r = read(a, buf, sizeof(buf));
	write(a, "world", 5);
	int status = reap(child);
	struct sockaddr_un name;
	socklen_t nlen = sizeof(name);
	getsockname(srv, (struct sockaddr *)&name, &nlen);
	struct sockaddr_un aname;
	socklen_t anlen = sizeof(aname);
	getsockname(a, (struct sockaddr *)&aname, &anlen);
	close(a);
	close(srv);
	unlink("/tmp/sock-a");
	CHECK(b == 0 && l == 0, "bind %d, listen %d: %s", b, l, strerror(errno));
	CHECK(s == 0 && S_ISSOCK(st.st_mode), "the path: stat %d, mode %o", s, st.st_mode);
	CHECK(a >= 0 && flen == sizeof(sa_family_t), "accept %d, the client's address length %u", a,
	      flen);
	CHECK(r == 5 && !memcmp(buf, "hello", 5), "read %zd '%s'", r, buf);
	CHECK(status == 0, "the client failed at step %d", status);
	CHECK(nlen == len && !strcmp(name.sun_path, "/tmp/sock-a"), "getsockname: %u '%s'", nlen,
	      name.sun_path);
	CHECK(anlen == len, "the accepted socket's name length %u", anlen);
	return 0;
}

static int bind_and_connect_errors(void)
{
	unlink("/tmp/sock-b");
	mkdir("/tmp", 01777);
	int s = socket(AF_UNIX, SOCK_STREAM, 0);
	struct sockaddr_un addr;
	socklen_t len = path_addr(&addr, "/tmp/sock-b");
	bind(s, (struct sockaddr *)&addr, len);
	int again = bind(s, (struct sockaddr *)&addr, len);
	int e1 = errno;
	struct sockaddr_un other;
	socklen_t olen = path_addr(&other, "/tmp/sock-b2");
	unlink("/tmp/sock-b2");
	int second = bind(s, (struct sockaddr *)&other, olen);
	int e1b = errno;
	int second_exists = access("/tmp/sock-b2", F_OK);
	int t = socket(AF_UNIX, SOCK_STREAM, 0);
	int inuse = bind(t, (struct sockaddr *)&addr, len);
	int e2 = errno;
	int c = socket(AF_UNIX, SOCK_STREAM, 0);
	int refused = connect(c, (struct sockaddr *)&addr, len);
	int e3 = errno;
	struct sockaddr_un missing;
	socklen_t mlen = path_addr(&missing, "/tmp/no-such-sock");
	int noent = connect(c, (struct sockaddr *)&missing, mlen);
	int e4 = errno;
	int unbound = listen(t, 1);
	int e5 = errno;
	addr.sun_family = AF_INET;
	int family = bind(t, (struct sockaddr *)&addr, len);
	int e6 = errno;
	int d = socket(AF_UNIX, SOCK_DGRAM, 0);
	struct sockaddr_un sa;
	socklen_t slen = path_addr(&sa, "/tmp/sock-b");
	int proto = connect(d, (struct sockaddr *)&sa, slen);
	int e7 = errno;
	close(s);
	int closed = connect(c, (struct sockaddr *)&sa, slen);
	int e8 = errno;
	close(c);
	close(t);
	close(d);
	unlink("/tmp/sock-b");
	CHECK(again == -1 && e1 == EADDRINUSE, "binding the same path again: %d (%s)", again,
	      strerror(e1));
	CHECK(second == -1 && e1b == EINVAL, "binding a bound socket: %d (%s)", second,
	      strerror(e1b));
	CHECK(second_exists == -1, "the refused bind left its path behind");
	CHECK(inuse == -1 && e2 == EADDRINUSE, "a taken path: %d (%s)", inuse, strerror(e2));
	CHECK(refused == -1 && e3 == ECONNREFUSED, "not listening: %d (%s)", refused,
	      strerror(e3));
	CHECK(noent == -1 && e4 == ENOENT, "a missing path: %d (%s)", noent, strerror(e4));
	CHECK(unbound == -1 && e5 == EINVAL, "listen unbound: %d (%s)", unbound, strerror(e5));
	CHECK(family == -1 && e6 == EINVAL, "AF_INET address: %d (%s)", family, strerror(e6));
	CHECK(proto == -1 && e7 == EPROTOTYPE, "dgram to a stream: %d (%s)", proto, strerror(e7));
	CHECK(closed == -1 && e8 == ECONNREFUSED, "after the close: %d (%s)", closed, strerror(e8));
	return 0;
}

static int accept_nonblocking_flags_and_poll(void)
{
	int srv = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	struct sockaddr_un addr;
	socklen_t len = abstract_addr(&addr, "faultline-accept");
	bind(srv, (struct sockaddr *)&addr, len);
	listen(srv, 2);
	int none = accept(srv, NULL, NULL);
	int e = errno;
	struct pollfd p = { srv, POLLIN | POLLOUT, 0 };
	int idle = poll(&p, 1, 0);
	int c = socket(AF_UNIX, SOCK_STREAM, 0);
	int conn = connect(c, (struct sockaddr *)&addr, len);
	int ready = poll(&p, 1, 0);
	short rev = p.revents;
	int a = accept4(srv, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	int fl = fcntl(a, F_GETFL), fd = fcntl(a, F_GETFD), sfd = fcntl(srv, F_GETFD);
	char buf[4];
	ssize_t r = read(a, buf, sizeof(buf));
	int er = errno;
	int badflags = accept4(srv, NULL, NULL, 0x1);
	int eb = errno;
	close(a);
	close(c);
	close(srv);
	CHECK(none == -1 && e == EAGAIN, "accept with nobody: %d (%s)", none, strerror(e));
	CHECK(idle == 0, "an idle listener polls %#x", p.revents);
	CHECK(conn == 0 && ready == 1 && rev == POLLIN, "after connect: %d, poll %d %#x", conn,
	      ready, rev);
	CHECK(a >= 0 && (fl & O_NONBLOCK) && fd == FD_CLOEXEC && sfd == FD_CLOEXEC,
	      "accept4 flags: fd %d fl %#x fd %#x", a, fl, fd);
	CHECK(r == -1 && er == EAGAIN, "an empty nonblocking read: %zd (%s)", r, strerror(er));
	CHECK(badflags == -1 && eb == EINVAL, "accept4 flag 1: %d (%s)", badflags, strerror(eb));
	return 0;
}

static int abstract_names_and_autobind(void)
{
	int s = socket(AF_UNIX, SOCK_DGRAM, 0);
	struct sockaddr_un addr;
	socklen_t len = abstract_addr(&addr, "faultline-abs");
	int b = bind(s, (struct sockaddr *)&addr, len);
	int t = socket(AF_UNIX, SOCK_DGRAM, 0);
	int inuse = bind(t, (struct sockaddr *)&addr, len);
	int e = errno;
	struct sockaddr_un name;
	socklen_t nlen = sizeof(name);
	getsockname(s, (struct sockaddr *)&name, &nlen);
	struct sockaddr_un fam = { .sun_family = AF_UNIX };
	int ab = bind(t, (struct sockaddr *)&fam, sizeof(sa_family_t));
	struct sockaddr_un auto_name;
	socklen_t alen = sizeof(auto_name);
	getsockname(t, (struct sockaddr *)&auto_name, &alen);
	close(s);
	int u = socket(AF_UNIX, SOCK_DGRAM, 0);
	int reuse = bind(u, (struct sockaddr *)&addr, len);
	close(t);
	close(u);
	CHECK(b == 0, "bind: %s", strerror(errno));
	CHECK(inuse == -1 && e == EADDRINUSE, "a taken name: %d (%s)", inuse, strerror(e));
	CHECK(nlen == len && name.sun_path[0] == 0 && !memcmp(name.sun_path + 1, "faultline-abs", 13),
	      "getsockname length %u", nlen);
	CHECK(ab == 0 && alen == offsetof(struct sockaddr_un, sun_path) + 6 &&
		      auto_name.sun_path[0] == 0,
	      "autobind: %d, name length %u", ab, alen);
	CHECK(reuse == 0, "the name after its socket closed: %s", strerror(errno));
	return 0;
}

static int dgram_keeps_boundaries_and_truncates(void)
{
	int sv[2];
	socketpair(AF_UNIX, SOCK_DGRAM, 0, sv);
	send(sv[0], "first", 5, 0);
	send(sv[0], "second!", 7, 0);
	int inq = -1;
	ioctl(sv[1], FIONREAD, &inq);
	char buf[16] = { 0 };
	ssize_t a = recv(sv[1], buf, sizeof(buf), 0);
	char small[3];
	struct iovec iov = { small, sizeof(small) };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	ssize_t b = recvmsg(sv[1], &msg, 0);
	int sec = !memcmp(small, "sec", 3);
	send(sv[0], "0123456789", 10, 0);
	ssize_t c = recv(sv[1], small, sizeof(small), MSG_TRUNC);
	ssize_t d = recv(sv[1], buf, sizeof(buf), MSG_DONTWAIT);
	int e = errno;
	close(sv[0]);
	close(sv[1]);
	CHECK(inq == 5, "FIONREAD on a datagram socket: %d, want the next message's 5", inq);
	CHECK(a == 5 && !memcmp(buf, "first", 5), "the first message: %zd", a);
	CHECK(b == 3 && (msg.msg_flags & MSG_TRUNC) && sec,
	      "a truncated one: %zd, flags %#x", b, msg.msg_flags);
	CHECK(c == 10, "MSG_TRUNC returns the whole length: %zd", c);
	CHECK(d == -1 && e == EAGAIN, "the rest was dropped: %zd (%s)", d, strerror(e));
	return 0;
}

static int dgram_sendto_recvfrom_with_addresses(void)
{
	unlink("/tmp/dg-a");
	unlink("/tmp/dg-b");
	mkdir("/tmp", 01777);
	int a = socket(AF_UNIX, SOCK_DGRAM, 0), b = socket(AF_UNIX, SOCK_DGRAM, 0);
	struct sockaddr_un aa, ba;
	socklen_t alen = path_addr(&aa, "/tmp/dg-a"), blen = path_addr(&ba, "/tmp/dg-b");
	bind(a, (struct sockaddr *)&aa, alen);
	bind(b, (struct sockaddr *)&ba, blen);
	ssize_t s = sendto(a, "to b", 4, 0, (struct sockaddr *)&ba, blen);
	char buf[8] = { 0 };
	struct sockaddr_un from;
	socklen_t flen = sizeof(from);
	ssize_t r = recvfrom(b, buf, sizeof(buf), 0, (struct sockaddr *)&from, &flen);
	int tob = !memcmp(buf, "to b", 4);
	int u = socket(AF_UNIX, SOCK_DGRAM, 0);
	ssize_t nodest = send(u, "x", 1, 0);
	int e1 = errno;
	sendto(u, "anon", 4, 0, (struct sockaddr *)&ba, blen);
	struct sockaddr_un from2;
	socklen_t flen2 = sizeof(from2);
	ssize_t r2 = recvfrom(b, buf, sizeof(buf), 0, (struct sockaddr *)&from2, &flen2);
	close(a);
	ssize_t gone = sendto(u, "x", 1, 0, (struct sockaddr *)&aa, alen);
	int e2 = errno;
	close(b);
	close(u);
	unlink("/tmp/dg-a");
	unlink("/tmp/dg-b");
	CHECK(s == 4 && r == 4 && tob, "sendto %zd, recvfrom %zd", s, r);
	CHECK(flen == alen && !strcmp(from.sun_path, "/tmp/dg-a"), "the source: %u '%s'", flen,
	      from.sun_path);
	CHECK(nodest == -1 && e1 == ENOTCONN, "send without a destination: %zd (%s)", nodest,
	      strerror(e1));
	CHECK(r2 == 4 && flen2 == 0, "an unnamed sender: %zd, address length %u", r2, flen2);
	CHECK(gone == -1 && e2 == ECONNREFUSED, "to a closed socket's path: %zd (%s)", gone,
	      strerror(e2));
	return 0;
}

static int seqpacket_keeps_boundaries_and_eof(void)
{
	int sv[2];
	int r = socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv);
	send(sv[0], "one", 3, 0);
	send(sv[0], "three", 5, 0);
	char buf[16];
	ssize_t a = recv(sv[1], buf, sizeof(buf), 0);
	ssize_t b = recv(sv[1], buf, sizeof(buf), 0);
	int type = 0;
	socklen_t tl = sizeof(type);
	getsockopt(sv[0], SOL_SOCKET, SO_TYPE, &type, &tl);
	close(sv[0]);
	ssize_t eof = recv(sv[1], buf, sizeof(buf), 0);
	close(sv[1]);
	CHECK(r == 0, "socketpair: %s", strerror(errno));
	CHECK(a == 3 && b == 5, "two messages: %zd and %zd", a, b);
	CHECK(type == SOCK_SEQPACKET, "SO_TYPE %d", type);
	CHECK(eof == 0, "after the close: %zd", eof);
	return 0;
}

static int socket_options(void)
{
	int sv[2];
	socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
	int v = -1;
	socklen_t l = sizeof(v);
	int t = getsockopt(sv[0], SOL_SOCKET, SO_TYPE, &v, &l);
	int type = v;
	l = sizeof(v);
	getsockopt(sv[0], SOL_SOCKET, SO_ERROR, &v, &l);
	int err = v;
	int size = 65536;
	setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &size, sizeof(size));
	setsockopt(sv[0], SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
	int snd = 0, rcv = 0;
	l = sizeof(snd);
	getsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &snd, &l);
	l = sizeof(rcv);
	getsockopt(sv[0], SOL_SOCKET, SO_RCVBUF, &rcv, &l);
	int tiny = 1;
	setsockopt(sv[1], SOL_SOCKET, SO_SNDBUF, &tiny, sizeof(tiny));
	int floor = 0;
	l = sizeof(floor);
	getsockopt(sv[1], SOL_SOCKET, SO_SNDBUF, &floor, &l);
	struct ucred cred;
	l = sizeof(cred);
	int pc = getsockopt(sv[0], SOL_SOCKET, SO_PEERCRED, &cred, &l);
	socklen_t credlen = l;
	l = sizeof(v);
	int unknown = getsockopt(sv[0], SOL_SOCKET, 12345, &v, &l);
	int eu = errno;
	short half;
	l = sizeof(half);
	int shortlen = setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &half, sizeof(half));
	int es = errno;
	int p[2];
	pipe(p);
	l = sizeof(v);
	int notsock = getsockopt(p[0], SOL_SOCKET, SO_TYPE, &v, &l);
	int en = errno;
	close(p[0]);
	close(p[1]);
	close(sv[0]);
	close(sv[1]);
	CHECK(t == 0 && type == SOCK_STREAM, "SO_TYPE %d", type);
	CHECK(err == 0, "SO_ERROR %d", err);
	CHECK(snd == 131072 && rcv == 131072, "SO_SNDBUF %d, SO_RCVBUF %d after 65536", snd, rcv);
	CHECK(floor == 4608, "SO_SNDBUF 1 gives %d", floor);
	CHECK(pc == 0 && credlen == sizeof(cred) && cred.pid == getpid(), "SO_PEERCRED pid %d",
	      cred.pid);
	CHECK(unknown == -1 && eu == ENOPROTOOPT, "option 12345: %d (%s)", unknown, strerror(eu));
	CHECK(shortlen == -1 && es == EINVAL, "a 2-byte option: %d (%s)", shortlen, strerror(es));
	CHECK(notsock == -1 && en == ENOTSOCK, "a pipe: %d (%s)", notsock, strerror(en));
	return 0;
}

static int socket_creation_errors(void)
{
	int a = socket(AF_UNIX, 99, 0);
	int ea = errno;
	int b = socket(AF_UNIX, SOCK_STREAM, 5);
	int eb = errno;
	int c = socket(AF_UNIX, 4 /* SOCK_RDM */, 0);
	int ec = errno;
	int d = socket(AF_UNIX, SOCK_STREAM | 0x100, 0);
	int ed = errno;
	int f = socket(99, SOCK_STREAM, 0);
	int ef = errno;
	int sv[2];
	int *badsv = (int *)8;
	__asm__("" : "+r"(badsv));
	int g = socketpair(AF_UNIX, SOCK_STREAM, 0, badsv);
	int eg = errno;
	int h = socket(AF_UNIX, SOCK_RAW, 0);
	int type = 0;
	socklen_t tl = sizeof(type);
	getsockopt(h, SOL_SOCKET, SO_TYPE, &type, &tl);
	close(h);
	(void)sv;
	CHECK(a == -1 && ea == EINVAL, "type 99: %d (%s)", a, strerror(ea));
	CHECK(b == -1 && eb == EPROTONOSUPPORT, "protocol 5: %d (%s)", b, strerror(eb));
	CHECK(c == -1 && ec == ESOCKTNOSUPPORT, "SOCK_RDM: %d (%s)", c, strerror(ec));
	CHECK(d == -1 && ed == EINVAL, "flag 0x100: %d (%s)", d, strerror(ed));
	CHECK(f == -1 && ef == EAFNOSUPPORT, "family 99: %d (%s)", f, strerror(ef));
	CHECK(g == -1 && eg == EFAULT, "a bad sv: %d (%s)", g, strerror(eg));
	CHECK(h >= 0 && type == SOCK_DGRAM, "SOCK_RAW is a datagram socket: %d, type %d", h, type);
	return 0;
}

static int stream_fionread_peek_and_waitall(void)
{
	int sv[2];
	socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
	write(sv[0], "abc", 3);
	write(sv[0], "defg", 4);
	int inq = -1;
	ioctl(sv[1], FIONREAD, &inq);
	char buf[16] = { 0 };
	ssize_t peek = recv(sv[1], buf, 5, MSG_PEEK);
	char all[16] = { 0 };
	ssize_t got = recv(sv[1], all, 7, MSG_WAITALL);
	int after = -1;
	ioctl(sv[1], FIONREAD, &after);
	close(sv[0]);
	close(sv[1]);
	CHECK(inq == 7, "FIONREAD %d", inq);
	CHECK(peek == 5 && !memcmp(buf, "abcde", 5), "MSG_PEEK: %zd '%s'", peek, buf);
	CHECK(got == 7 && !memcmp(all, "abcdefg", 7), "MSG_WAITALL: %zd '%s'", got, all);
	CHECK(after == 0, "FIONREAD after %d", after);
	return 0;
}

static void *write_later(void *arg)
{
	sleep_ms(50);
	write(*(int *)arg, "late", 4);
	return NULL;
}

static int blocked_reader_woken_by_thread_and_epoll(void)
{
	int sv[2];
	socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
	pthread_t t;
	pthread_create(&t, NULL, write_later, &sv[0]);
	char buf[8] = { 0 };
	ssize_t r = read(sv[1], buf, sizeof(buf));
	pthread_join(t, NULL);
	int ep = epoll_create1(0);
	struct epoll_event ev = { .events = EPOLLIN | EPOLLOUT, .data.u32 = 9 };
	epoll_ctl(ep, EPOLL_CTL_ADD, sv[1], &ev);
	struct epoll_event out[1];
	int writable = epoll_wait(ep, out, 1, 0);
	uint32_t w_events = out[0].events;
	ev.events = EPOLLIN;
	epoll_ctl(ep, EPOLL_CTL_MOD, sv[1], &ev);
	int idle = epoll_wait(ep, out, 1, 0);
	pthread_create(&t, NULL, write_later, &sv[0]);
	int woken = epoll_wait(ep, out, 1, 5000);
	uint32_t r_events = out[0].events;
	pthread_join(t, NULL);
	close(ep);
	close(sv[0]);
	close(sv[1]);
	CHECK(r == 4 && !memcmp(buf, "late", 4), "the blocked read: %zd '%s'", r, buf);
	CHECK(writable == 1 && w_events == EPOLLOUT, "writable: %d %#x", writable, w_events);
	CHECK(idle == 0, "idle: %d", idle);
	CHECK(woken == 1 && r_events == EPOLLIN && out[0].data.u32 == 9, "woken: %d %#x", woken,
	      r_events);
	return 0;
}

static int nonblocking_stream_fills_then_eagain(void)
{
	int sv[2];
	socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv);
	static char chunk[4096];
	long total = 0;
	ssize_t n;
	while ((n = write(sv[0], chunk, sizeof(chunk))) > 0 && total < (64L << 20))
		total += n;
	int e = errno;
	struct pollfd p = { sv[0], POLLOUT, 0 };
	int full = poll(&p, 1, 0);
	static char sink[65536];
	long drained = 0;
	while ((n = read(sv[1], sink, sizeof(sink))) > 0)
		drained += n;
	int writable = poll(&p, 1, 0);
	close(sv[0]);
	close(sv[1]);
	CHECK(n == -1 && e == EAGAIN, "the last write: %s", strerror(e));
	CHECK(total > 4096 && total < (16L << 20), "%ld bytes before EAGAIN", total);
	CHECK(full == 0, "a full socket polls writable");
	CHECK(drained == total, "drained %ld of %ld", drained, total);
	CHECK(writable == 1, "not writable after draining");
	return 0;
}

/* Nonblocking writes of `len` bytes to an unread socketpair of `type`:
 * how many go before EAGAIN (-1 if another error ends them), after which
 * the reader gets every one back. */
static long writes_until_full(int type, size_t len)
{
	int sv[2];
	if (socketpair(AF_UNIX, type | SOCK_NONBLOCK, 0, sv))
		return -1;
	static char buf[65536], sink[65536];
	long n = 0, bytes = 0;
	ssize_t r;
	while ((r = write(sv[0], buf, len)) >= 0 && n < 10000000) {
		n++;
		bytes += r;
	}
	int e = errno;
	long back = 0;
	while ((r = read(sv[1], sink, sizeof(sink))) > 0)
		back += r;
	close(sv[0]);
	close(sv[1]);
	return e == EAGAIN && back == bytes ? n : -1;
}

static int tiny_packets_fill_the_send_buffer(void)
{
	/* Linux charges each packet its skb's size (768 bytes for a small
	 * one) against the 212992-byte SO_SNDBUF: a reader that never reads
	 * stops a writer of tiny packets after 278, not after 212992. */
	static const struct { int type; size_t len; long writes; } cases[] = {
		{ SOCK_DGRAM, 1, 278 },		{ SOCK_DGRAM, 0, 278 },
		{ SOCK_DGRAM, 1000, 93 },	{ SOCK_DGRAM, 8000, 13 },
		{ SOCK_DGRAM, 65536, 4 },	{ SOCK_SEQPACKET, 1, 278 },
		{ SOCK_SEQPACKET, 500, 167 },	{ SOCK_STREAM, 1, 278 },
		{ SOCK_STREAM, 2000, 49 },	{ SOCK_STREAM, 4000, 44 },
		{ SOCK_STREAM, 8000, 24 },
	};
	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		long n = writes_until_full(cases[i].type, cases[i].len);
		CHECK(n == cases[i].writes, "type %d, %zu-byte writes: %ld before EAGAIN, not %ld",
		      cases[i].type, cases[i].len, n, cases[i].writes);
	}
	return 0;
}

static int read_and_write_move_whole_datagrams(void)
{
	int sv[2];
	CHECK(socketpair(AF_UNIX, SOCK_DGRAM, 0, sv) == 0, "socketpair: %s", strerror(errno));
	static char big[150000], got[160000];
	memset(big, 'x', sizeof(big));
	big[sizeof(big) - 1] = 'y';
	ssize_t w = write(sv[0], big, sizeof(big));
	ssize_t empty = write(sv[0], big, 0);
	ssize_t r = read(sv[1], got, sizeof(got));
	CHECK(w == sizeof(big) && r == sizeof(big) && got[r - 1] == 'y',
	      "a %zu-byte datagram: wrote %zd, read %zd", sizeof(big), w, r);
	CHECK(empty == 0 && read(sv[1], got, sizeof(got)) == 0, "an empty datagram");
	/* readv takes one message across its buffers, writev sends one. */
	char a[3], b[10];
	struct iovec out[2] = { { "abc", 3 }, { "defgh", 5 } };
	struct iovec in[2] = { { a, sizeof(a) }, { b, sizeof(b) } };
	CHECK(writev(sv[0], out, 2) == 8 && write(sv[0], "next", 4) == 4, "writev: %s",
	      strerror(errno));
	r = readv(sv[1], in, 2);
	CHECK(r == 8 && memcmp(a, "abc", 3) == 0 && memcmp(b, "defgh", 5) == 0,
	      "readv read %zd", r);
	CHECK(read(sv[1], got, 2) == 2 && memcmp(got, "ne", 2) == 0 &&
		      recv(sv[1], got, 10, MSG_DONTWAIT) < 0 && errno == EAGAIN,
	      "a short read drops the rest of its datagram");
	close(sv[0]);
	close(sv[1]);
	return 0;
}

static int scm_rights_passes_a_descriptor(void)
{
	int sv[2];
	socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
	int p[2];
	pipe(p);
	char byte = 'F';
	struct iovec iov = { &byte, 1 };
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	memset(&u, 0, sizeof(u));
	struct msghdr msg = { .msg_iov = &iov,
			      .msg_iovlen = 1,
			      .msg_control = u.buf,
			      .msg_controllen = sizeof(u.buf) };
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &p[1], sizeof(int));
	ssize_t s = sendmsg(sv[0], &msg, 0);
	close(p[1]);
	pid_t child = fork();
	if (child == 0) {
		char got;
		union {
			char buf[CMSG_SPACE(sizeof(int))];
			struct cmsghdr align;
		} r;
		struct iovec riov = { &got, 1 };
		struct msghdr rmsg = { .msg_iov = &riov,
				       .msg_iovlen = 1,
				       .msg_control = r.buf,
				       .msg_controllen = sizeof(r.buf) };
		if (recvmsg(sv[1], &rmsg, MSG_CMSG_CLOEXEC) != 1 || got != 'F')
			_exit(1);
		struct cmsghdr *rc = CMSG_FIRSTHDR(&rmsg);
		if (!rc || rc->cmsg_type != SCM_RIGHTS || rc->cmsg_len != CMSG_LEN(sizeof(int)))
			_exit(2);
		int fd;
		memcpy(&fd, CMSG_DATA(rc), sizeof(int));
		if (fcntl(fd, F_GETFD) != FD_CLOEXEC)
			_exit(3);
		if (write(fd, "via fd", 6) != 6)
			_exit(4);
		_exit(0);
	}
	int status = reap(child);
	char buf[8] = { 0 };
	ssize_t r = read(p[0], buf, sizeof(buf));
	close(p[0]);
	close(sv[0]);
	close(sv[1]);
	CHECK(s == 1, "sendmsg: %zd (%s)", s, strerror(errno));
	CHECK(status == 0, "the receiver failed at step %d", status);
	CHECK(r == 6 && !memcmp(buf, "via fd", 6), "through the passed pipe: %zd '%s'", r, buf);
	return 0;
}

static int sendmsg_gathers_recvmsg_scatters(void)
{
	int sv[2];
	socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
	struct iovec out[3] = { { "ab", 2 }, { "", 0 }, { "cdef", 4 } };
	struct msghdr m = { .msg_iov = out, .msg_iovlen = 3 };
	ssize_t s = sendmsg(sv[0], &m, 0);
	char x[3] = { 0 }, y[8] = { 0 };
	struct iovec in[2] = { { x, 3 }, { y, 8 } };
	struct msghdr r = { .msg_iov = in, .msg_iovlen = 2 };
	ssize_t got = recvmsg(sv[1], &r, 0);
	struct msghdr bad = { .msg_iov = out, .msg_iovlen = 2000 };
	ssize_t toomany = sendmsg(sv[0], &bad, 0);
	int e = errno;
	close(sv[0]);
	close(sv[1]);
	CHECK(s == 6, "sendmsg: %zd", s);
	CHECK(got == 6 && !memcmp(x, "abc", 3) && !memcmp(y, "def", 3), "recvmsg: %zd '%.3s' '%s'",
	      got, x, y);
	CHECK(r.msg_flags == 0 && r.msg_controllen == 0, "flags %#x, controllen %zu", r.msg_flags,
	      (size_t)r.msg_controllen);
	CHECK(toomany == -1 && e == EMSGSIZE, "2000 iovecs: %zd (%s)", toomany, strerror(e));
	return 0;
}

static int peercred_of_an_accepted_connection(void)
{
	int srv = socket(AF_UNIX, SOCK_STREAM, 0);
	struct sockaddr_un addr;
	socklen_t len = abstract_addr(&addr, "faultline-cred");
	bind(srv, (struct sockaddr *)&addr, len);
	listen(srv, 1);
	int ready[2];
	pipe(ready);
	pid_t child = fork();
	if (child == 0) {
		int c = socket(AF_UNIX, SOCK_STREAM, 0);
		if (connect(c, (struct sockaddr *)&addr, len) != 0)
			_exit(1);
		struct ucred cred;
		socklen_t l = sizeof(cred);
		if (getsockopt(c, SOL_SOCKET, SO_PEERCRED, &cred, &l) != 0 ||
		    cred.pid != getppid())
			_exit(2);
		char b;
		read(c, &b, 1);
		_exit(0);
	}
	int a = accept(srv, NULL, NULL);
	struct ucred cred;
	socklen_t l = sizeof(cred);
	getsockopt(a, SOL_SOCKET, SO_PEERCRED, &cred, &l);
	int accepting = 0;
	l = sizeof(accepting);
	getsockopt(srv, SOL_SOCKET, SO_ACCEPTCONN, &accepting, &l);
	write(a, "k", 1);
	int status = reap(child);
	close(a);
	close(srv);
	close(ready[0]);
	close(ready[1]);
	CHECK(cred.pid == child, "the server's SO_PEERCRED pid %d, want %d", cred.pid, child);
	CHECK(accepting == 1, "SO_ACCEPTCONN %d", accepting);
	CHECK(status == 0, "the client failed at step %d", status);
	return 0;
}

static int a_large_read_returns_what_is_queued(void)
{
	static char big[131072];
	int sv[2], p[2];
	socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
	pipe(p);
	ssize_t ws = write(sv[0], big, 65536);
	ssize_t wp = write(p[1], big, 65536);
	ssize_t rs = read(sv[1], big, sizeof(big));
	ssize_t rp = read(p[0], big, sizeof(big));
	close(sv[0]);
	close(sv[1]);
	close(p[0]);
	close(p[1]);
	CHECK(ws == 65536 && wp == 65536, "writes %zd %zd", ws, wp);
	CHECK(rs == 65536, "a 128K read of a socket holding 64K: %zd", rs);
	CHECK(rp == 65536, "a 128K read of a pipe holding 64K: %zd", rp);
	return 0;
}

static int seqpacket_listener_and_a_full_backlog(void)
{
	int srv = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	struct sockaddr_un addr;
	socklen_t len = abstract_addr(&addr, "faultline-seqpacket");
	bind(srv, (struct sockaddr *)&addr, len);
	int l = listen(srv, 0);
	int c1 = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	int first = connect(c1, (struct sockaddr *)&addr, len);
	int c2 = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK, 0);
	int full = connect(c2, (struct sockaddr *)&addr, len);
	int e = errno;
	send(c1, "ab", 2, 0);
	send(c1, "cde", 3, 0);
	int a = accept(srv, NULL, NULL);
	char buf[8];
	ssize_t m1 = recv(a, buf, sizeof(buf), 0);
	ssize_t m2 = recv(a, buf, sizeof(buf), 0);
	/* Linux waits for room in the backlog before it looks at the state. */
	int isconn = connect(c1, (struct sockaddr *)&addr, len);
	int ei = errno;
	int again = connect(c2, (struct sockaddr *)&addr, len);
	close(a);
	close(c1);
	close(c2);
	close(srv);
	CHECK(l == 0 && first == 0, "listen %d, connect %d", l, first);
	CHECK(full == -1 && e == EAGAIN, "a second connect to backlog 0: %d (%s)", full,
	      strerror(e));
	CHECK(a >= 0 && m1 == 2 && m2 == 3, "accepted %d, messages %zd and %zd", a, m1, m2);
	CHECK(again == 0, "connect after the accept: %s", strerror(errno));
	CHECK(isconn == -1 && ei == EISCONN, "connecting twice: %d (%s)", isconn, strerror(ei));
	return 0;
}

int main(void)
{
	static const struct test tests[] = {
		TEST(socketpair_stream_carries_bytes_both_ways),
		TEST(stream_reads_eof_after_the_peer_closes),
		TEST(stream_write_to_closed_peer_is_epipe_and_sigpipe),
		TEST(shutdown_write_gives_the_peer_eof),
		TEST(bind_listen_accept_connect_on_a_path),
		TEST(bind_and_connect_errors),
		TEST(accept_nonblocking_flags_and_poll),
		TEST(abstract_names_and_autobind),
		TEST(dgram_keeps_boundaries_and_truncates),
		TEST(dgram_sendto_recvfrom_with_addresses),
		TEST(seqpacket_keeps_boundaries_and_eof),
		TEST(seqpacket_listener_and_a_full_backlog),
		TEST(socket_options),
		TEST(socket_creation_errors),
		TEST(stream_fionread_peek_and_waitall),
		TEST(blocked_reader_woken_by_thread_and_epoll),
		TEST(nonblocking_stream_fills_then_eagain),
		TEST(tiny_packets_fill_the_send_buffer),
		TEST(read_and_write_move_whole_datagrams),
		TEST(scm_rights_passes_a_descriptor),
		TEST(sendmsg_gathers_recvmsg_scatters),
		TEST(peercred_of_an_accepted_connection),
		TEST(a_large_read_returns_what_is_queued),
	};
	return run_tests("sockets", tests, sizeof(tests) / sizeof(tests[0])) ? 1 : 0;
}
