"""The files abstat writes into a test box's image: its init, sshd's configuration, the boot hooks.

Texts only (no I/O): :mod:`abstat.lab.testbox.image` writes them.  The box boots a Debian kernel with
a small initramfs (:data:`INITRD_INIT`: load the virtio modules, mount ``/dev/vda``, switch to it),
then BusyBox's ``init`` runs :data:`RC_START` and keeps ``sshd`` running (:data:`SSHD_RUN`).  ``reboot`` and
``poweroff`` are BusyBox's, after noting which one was asked; at shutdown :data:`RC_STOP` tells
the supervisor on this machine (over the second serial port, ``/dev/ttyS1``) what was asked and
the next boot chosen in ``/boot/next-boot`` (read once, then removed, as ``grub-reboot``'s entry).
"""

from __future__ import annotations

# the modules the initramfs loads, with their dependencies (Debian's cloud kernel builds them as modules)
INITRD_MODULES = ("virtio_pci", "virtio_blk", "virtio_net", "virtio_rng")

INITRD_INIT = """#!/bin/busybox sh
/bin/busybox mkdir -p /proc /sys /dev /newroot
/bin/busybox mount -t proc proc /proc
/bin/busybox mount -t sysfs sysfs /sys
/bin/busybox mount -t devtmpfs devtmpfs /dev
for module in $(/bin/busybox cat /modules/order); do
    /bin/busybox insmod /modules/"$module".ko 2>/dev/null
done
tries=0
while [ ! -b /dev/vda ] && [ "$tries" -lt 300 ]; do /bin/busybox sleep 0.1; tries=$((tries + 1)); done
if ! /bin/busybox mount -t ext4 -o rw /dev/vda /newroot; then
    echo "abstat-testbox: cannot mount the root disk /dev/vda" >/dev/console
    /bin/busybox poweroff -f
fi
/bin/busybox umount /dev /sys /proc
exec /bin/busybox switch_root /newroot /sbin/init
"""

INITTAB = """::sysinit:/etc/init.d/rcS
::respawn:/usr/local/sbin/testbox-sshd
::shutdown:/etc/init.d/rcK
"""

# sshd, its log on the console as before.  Once it listens (its "Server listening on" line, logged after listen()),
# the box says so on its control port with its boot id and uptime (:data:`READY`): the host waits for this line
# instead of ssh attempts into a box that is still booting (each one hangs in QEMU's user network until its
# connect timeout).  No polling: a poll of /proc/net/tcp every 20 ms ran two programs a time, ~36 ms of a TCG
# guest's CPU each, while sshd started.  ``grep -q`` ends at the line; ``cat`` then drains the rest of the log.
# sshd -r (OpenSSH before 9.8, whose sshd re-executes itself for every connection unless told not to): a
# connection is served by a fork of the listener, not a new sshd loading its libraries again: under TCG
# about half of an ssh connection's time (``{sshd_flags}``: "-r " or nothing, by the image's OpenSSH)
SSHD_RUN = """#!/bin/sh
/usr/sbin/sshd {sshd_flags}-D -e 2>&1 | /bin/busybox tee /dev/console | {{
    /bin/busybox grep -q "^Server listening on " && /usr/local/sbin/testbox-ready
    exec /bin/busybox cat >/dev/null
}}
"""

READY = """#!/bin/sh
read -r boot </proc/sys/kernel/random/boot_id
read -r uptime _ </proc/uptime
echo "ready=$boot $uptime" >/dev/ttyS1
"""

RC_START = """#!/bin/sh
busybox mount -t proc proc /proc
busybox mount -t sysfs sysfs /sys
busybox mount -t devtmpfs devtmpfs /dev 2>/dev/null
busybox mkdir -p /dev/pts /dev/shm
busybox mount -t devpts devpts /dev/pts
busybox mount -t tmpfs tmpfs /run
busybox mount -t tmpfs tmpfs /tmp
busybox mount -t tmpfs tmpfs /dev/shm
busybox mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
busybox mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
busybox mount -t bpf bpf /sys/fs/bpf 2>/dev/null
busybox mount -o remount,rw,commit=1 /
name=testbox
read -r cmdline </proc/cmdline
for word in $cmdline; do
    case "$word" in testbox.name=*) name="${word#testbox.name=}" ;; esac
done
busybox hostname "$name"
busybox ip link set lo up
busybox ip link set eth0 up
busybox ip addr add 10.0.2.15/24 dev eth0
busybox ip route add default via 10.0.2.2
busybox mkdir -p -m 0755 /run/sshd
"""

RC_STOP = """#!/bin/sh
action=$(cat /run/abstat-action 2>/dev/null || echo reboot)
{
    echo "action=$action"
    if [ -f /boot/next-boot ]; then head -c 4096 /boot/next-boot; echo; fi
    echo "end"
} >/dev/ttyS1
rm -f /boot/next-boot
sync
busybox mount -o remount,ro / 2>/dev/null
sync
"""

# reboot, poweroff, halt: the shutdown script, then at once (-f): BusyBox's init would run the same script and
# then wait two seconds (one after SIGTERM to every process, one "for the console").  With -f (the machine
# goes down without its shutdown: a reset) or other options, BusyBox's own.
ACTION_WRAPPER = """#!/bin/sh
echo {action} >/run/abstat-action
if [ "$#" -eq 0 ]; then
    /etc/init.d/rcK
    exec /bin/busybox {action} -f
fi
exec /bin/busybox {action} "$@"
"""

NEXT_BOOT = """#!/bin/sh
# testbox-next-boot [--kernel NAME] [ARGS...]: the next reboot (not kexec) boots kernel NAME
# (default: the box's own) with ARGS added to its command line, once, as grub-reboot does.
kernel=default
if [ "$1" = "--kernel" ]; then kernel="$2"; shift 2; fi
printf 'kernel=%s\\nappend=%s\\n' "$kernel" "$*" >/boot/next-boot.tmp && mv /boot/next-boot.tmp /boot/next-boot
"""

SSHD_CONFIG = """Port 22
ListenAddress 0.0.0.0
HostKey /etc/ssh/ssh_host_ed25519_key
PermitRootLogin prohibit-password
PubkeyAuthentication yes
AuthorizedKeysFile .ssh/authorized_keys
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
UseDNS no
PrintMotd no
MaxSessions 200
MaxStartups 100:30:200
PidFile /run/sshd.pid
Subsystem sftp /usr/lib/openssh/sftp-server
"""

PASSWD = """root:x:0:0:root:/root:/bin/bash
sshd:x:100:65534::/run/sshd:/usr/sbin/nologin
nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin
"""
GROUP = "root:x:0:\nnogroup:x:65534:\n"
SHADOW = "root:*:19000:0:99999:7:::\nsshd:*:19000:0:99999:7:::\nnobody:*:19000:0:99999:7:::\n"
HOSTS = "127.0.0.1 localhost\n"
PROFILE = "export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\n"
