"""nvidia-smi sampling of the GPU a process uses (SM clock, power, temperature, clock-event reasons), for device
scripts that need the clock a measurement ran at. No torch.

    s = Sampler(path)        # starts `nvidia-smi -i GPU ... -lms 100` writing into path
    t0 = time.time(); ...; t1 = time.time()
    s.stop(); s.window(t0, t1)   # {"samples", "sm_MHz_median", "power_W_median", "power_cap_share"} or None
    Sampler(path, instant=True)  # also power.draw.instant where the driver has it (samples' 6th entry, else None)

GPU: the first entry of CUDA_VISIBLE_DEVICES (an index or a UUID; nvidia-smi -i takes both), else 0. The samples go
to a file, not a pipe (session 19: a pipe read only at the end filled after ~20 s on a 4-GPU host and sampling
stopped). nvidia-smi's timestamps are the device's local time, read back with time.mktime."""
import os
import statistics
import subprocess
import time

POWER_CAP_BIT = 0x4
FIELDS = "timestamp,clocks.sm,power.draw,temperature.gpu,clocks_event_reasons.active"


INSTANT_FIELD = "power.draw.instant"


def parse_samples(lines):
    """nvidia-smi rows of FIELDS (and INSTANT_FIELD) -> [(unix time, SM MHz, W, C, reasons text, instant W or None)];
    rows that do not parse are skipped."""
    out = []
    for line in lines:
        f = [x.strip() for x in line.split(",")]
        if len(f) < 5:
            continue
        try:
            stamp, frac = f[0].split(".")
            t = time.mktime(time.strptime(stamp, "%Y/%m/%d %H:%M:%S")) + float("0." + frac)
            instant = float(f[5]) if len(f) > 5 and f[5] not in ("[N/A]", "N/A", "") else None
            out.append((t, float(f[1]), float(f[2]), float(f[3]), f[4], instant))
        except (ValueError, IndexError):
            continue
    return out


def _has_field(target, field):
    try:
        probe = subprocess.run(["nvidia-smi", "-i", target, f"--query-gpu={field}", "--format=csv,noheader"],
                               capture_output=True, text=True)
    except OSError:
        return False
    return probe.returncode == 0 and "not a valid field" not in (probe.stdout + probe.stderr).lower()


class Sampler:
    def __init__(self, path, period_ms=100, instant=False):
        self.path = path
        target = os.environ.get("CUDA_VISIBLE_DEVICES", "0").split(",")[0] or "0"
        self.fields = FIELDS.split(",") + ([INSTANT_FIELD] if instant and _has_field(target, INSTANT_FIELD) else [])
        self._file = open(path, "w")
        try:
            self._proc = subprocess.Popen(["nvidia-smi", "-i", target, "--query-gpu=" + ",".join(self.fields),
                                           "--format=csv,noheader,nounits", "-lms", str(period_ms)],
                                          stdout=self._file, stderr=subprocess.DEVNULL, text=True)
        except OSError:  # no nvidia-smi (a CPU dry run): no samples
            self._proc = None

    def stop(self):
        if self._proc:
            self._proc.terminate()
            self._proc.wait()
        self._file.close()
        with open(self.path) as f:
            self.samples = parse_samples(f.read().splitlines())
        return self.samples

    def window(self, t0, t1):
        """Clock and power of the samples taken between t0 and t1 (unix times), or None when there are none."""
        inside = [s for s in getattr(self, "samples", []) if t0 <= s[0] <= t1]
        if not inside:
            return None
        caps = 0
        for s in inside:
            try:
                caps += bool(int(s[4], 16) & POWER_CAP_BIT)
            except ValueError:
                pass
        return {"samples": len(inside), "sm_MHz_median": statistics.median(s[1] for s in inside),
                "power_W_median": statistics.median(s[2] for s in inside),
                "power_cap_share": round(caps / len(inside), 3)}
