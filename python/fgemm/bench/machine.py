"""What a run was measured on, as its report states it."""

import datetime
import os
import platform
from pathlib import Path

import torch

import fgemm


def cpu_model():
    """The CPU's model name and family/model numbers from /proc/cpuinfo, else what platform knows."""
    fields = {}
    if Path("/proc/cpuinfo").exists():
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            key, _, value = line.partition(":")
            fields.setdefault(key.strip(), value.strip())
    if "model name" not in fields:
        return platform.processor() or "unknown"
    return f"{fields['model name']} (family {fields.get('cpu family', '?')}, model {fields.get('model', '?')})"


def machine_description(device):
    about = dict(device=device, torch=torch.__version__, fgemm=fgemm.__version__, python=platform.python_version(),
                 date=datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"))
    if device == "cuda":
        properties = torch.cuda.get_device_properties(0)
        about.update(name=properties.name, sms=properties.multi_processor_count, cuda=torch.version.cuda)
    else:
        isa, threads = fgemm._C.cpu_backend()
        about.update(name=cpu_model(), cores=os.cpu_count(), fgemm_isa=isa, fgemm_threads=threads,
                     torch_threads=torch.get_num_threads(), omp_wait_policy=os.environ.get("OMP_WAIT_POLICY"))
        if hasattr(os, "getloadavg"):  # on a shared machine, what else ran weighs on every time
            about.update(load_average_at_start=round(os.getloadavg()[0], 2))
        if os.environ.get("FGEMM_CPU_ISA"):  # the instruction set was chosen, not the best the CPU has
            about.update(fgemm_cpu_isa_set_to=os.environ["FGEMM_CPU_ISA"])
    return about
