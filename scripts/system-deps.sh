#!/usr/bin/env bash
# Debian packages Golem needs beyond PyPI:
#   libopenal1      game audio (without it ViZDoom's audio buffer is all zeros)
#   xvfb, xdotool   a virtual screen for the human-recording tests
# Installed when running as root with apt-get; otherwise says what to do.
set -u
need=()
ldconfig -p 2>/dev/null | grep -q 'libopenal\.so\.1' || need+=(libopenal1)
command -v Xvfb >/dev/null 2>&1 || need+=(xvfb)
command -v xdotool >/dev/null 2>&1 || need+=(xdotool)
[ ${#need[@]} -eq 0 ] && exit 0
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "golem: installing Debian packages: ${need[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -qq "${need[@]}" >/dev/null 2>&1 || { apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq "${need[@]}" >/dev/null; } \
    || echo "golem: could not install ${need[*]}; game audio or the human-recording tests may not work"
else
  echo "golem: optional system packages missing: ${need[*]}"
  echo "       on Debian/Ubuntu: sudo apt-get install -y ${need[*]}"
  echo "       (libopenal1 is needed for game audio; the others only for tests)"
fi
exit 0
