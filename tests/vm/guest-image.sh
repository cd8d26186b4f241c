#!/usr/bin/env bash
# Builds the Debian 13 guest that tests the sandbox on cgroup v2 (tests/vm/test_cgroup_v2.py):
# a root filesystem made with mmdebstrap from Debian's packages, as an ext4 disk image, with
# its kernel and initrd beside it. Debian 13 boots the unified cgroup hierarchy only, as every
# current distribution does.
#
#   bash tests/vm/guest-image.sh OUT_DIR
#
# OUT_DIR gets disk.ext4, vmlinuz and initrd. The guest runs /usr/local/sbin/grass-vm-test
# (below) at boot from a systemd unit with Delegate=yes, as deploy/systemd/grass-worker.service
# runs the worker, then powers off. About a minute; the caller caches OUT_DIR by this file's
# hash, so it is built once per machine.
set -euo pipefail
out="$1"
mkdir -p "$out"
work="$(mktemp -d "$out/.build-XXXXXX")"
trap 'rm -rf "$work"' EXIT

mmdebstrap --variant=minbase --mode=root --quiet \
    --include=linux-image-amd64,systemd-sysv,udev,kmod,procps,bubblewrap,util-linux,python3,python3-seccomp,python3-pytest,python3-pytest-timeout,python3-hypothesis \
    --dpkgopt='path-exclude=/usr/share/doc/*' \
    --dpkgopt='path-exclude=/usr/share/man/*' \
    --dpkgopt='path-exclude=/usr/share/locale/*' \
    --customize-hook='echo grass-vm > "$1"/etc/hostname' \
    --customize-hook='mkdir -p "$1"/mnt/project "$1"/var/lib/grass/runtime' \
    --customize-hook='ln -sf /dev/null "$1"/etc/systemd/system/serial-getty@ttyS0.service' \
    --customize-hook='ln -sf /dev/null "$1"/etc/systemd/system/getty@tty1.service' \
    trixie "$work/root" http://deb.debian.org/debian

cat > "$work/root/usr/local/sbin/grass-vm-test" <<'GUEST'
#!/bin/sh
# In the guest: mount the project and the runtime images from the host (9p, read-only), run
# the tests named on the kernel command line (grass.tests=a,b,c, pytest arguments), report on
# the serial console.
set -u
exec 2>&1
echo "GRASS-VM-BOOTED $(uname -r) $(stat -fc %T /sys/fs/cgroup) $(cat /proc/self/cgroup)"
modprobe -a 9pnet_virtio 9p 2>/dev/null
udevadm settle --timeout=60 2>/dev/null
# The virtio devices may still be probing on a slow (emulated, loaded) machine: retry a while.
for share in project:/mnt/project runtime:/var/lib/grass/runtime; do
    tries=0
    until mount -t 9p -o trans=virtio,version=9p2000.L,ro "${share%%:*}" "${share#*:}" 2>/dev/null; do
        tries=$((tries + 1))
        if [ "$tries" -ge 60 ]; then
            echo "GRASS-VM-RESULT mount-failed ${share%%:*}"
            exit 1
        fi
        sleep 1
    done
done
echo "GRASS-VM-MOUNTED"
tests=$(tr ' ' '\n' < /proc/cmdline | sed -n 's/^grass.tests=//p' | tr ',' ' ')
cd /mnt/project
CI=true GRASS_VM=1 PYTHONDONTWRITEBYTECODE=1 PYTHONPATH=/mnt/project \
    python3 -m pytest -p no:cacheprovider -o addopts= -o testpaths= --timeout=900 -q -rfE $tests
echo "GRASS-VM-RESULT $?"
GUEST
chmod 755 "$work/root/usr/local/sbin/grass-vm-test"
cat > "$work/root/etc/systemd/system/grass-vm-test.service" <<'UNIT'
[Unit]
Description=grass-ladder: the sandbox's tests on cgroup v2
After=multi-user.target

[Service]
Type=oneshot
# The worker's own setting: a cgroup subtree the sandbox may manage.
Delegate=yes
StandardOutput=tty
StandardError=tty
TTYPath=/dev/ttyS0
ExecStart=/usr/local/sbin/grass-vm-test
ExecStopPost=/bin/systemctl --no-block poweroff

[Install]
WantedBy=multi-user.target
UNIT
ln -s /etc/systemd/system/grass-vm-test.service \
    "$work/root/etc/systemd/system/multi-user.target.wants/grass-vm-test.service"

mke2fs -q -t ext4 -d "$work/root" "$work/disk.ext4" 2G
cp "$work/root"/boot/vmlinuz-* "$work/vmlinuz"
cp "$work/root"/boot/initrd.img-* "$work/initrd"
mv "$work/disk.ext4" "$work/vmlinuz" "$work/initrd" "$out/"
echo "guest-image: built in $out"
