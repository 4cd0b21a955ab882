#!/usr/bin/env python3
"""Writes the large-cluster files of topologies/ (multi-plane NDR, B200, GB200 NVL72, Spectrum-X RoCE and
oversubscribed variants) from the node templates of topologies/dgx-h100-8.json / hgx-h200-8.json and the
numbers below. Run from the repository root; the files are committed, so this only documents them."""
import json
import pathlib

ROOT = pathlib.Path(__file__).resolve().parent.parent / "topologies"
SRC_SUPERPOD = ("NVIDIA DGX SuperPOD Reference Architecture with DGX H100 (RA-11333-001): scalable units (SU) of "
                "32 DGX H100 nodes, rail-optimized NDR compute fabric of QM9700 switches; 4 SUs = 127-128 nodes")
SRC_SUPERPOD_B200 = ("NVIDIA DGX SuperPOD Reference Architecture with DGX B200 (docs.nvidia.com/dgx-superpod, "
                     "'Larger DGX SuperPOD component counts'): 32 nodes per SU; 2-16 SUs leaf/spine, from 16 SUs "
                     "(4,096 GPUs) a core tier: 16 SU = 128 leaf / 128 spine / 64 core, 64 SU = 16,384 GPUs")
SRC_MPFT = ("DeepSeek-AI, 'Insights into DeepSeek-V3: Scaling Challenges and Reflections on Hardware for AI "
            "Architectures' (ISCA 2025): multi-plane fat tree, each GPU-NIC pair in its own network plane, "
            "cross-plane traffic forwarded inside the node; two layers of 64-port 400G IB switches reach 16,384 GPUs")
SRC_QM9700 = "NVIDIA Quantum-2 QM9700 NDR switch datasheet (64 ports of 400 Gb/s)"
SRC_RAIL_ONLY = ("Wang et al., 'Rail-only: A Low-Cost High-Performance Network for Training LLMs with Trillion "
                 "Parameters' (arXiv 2307.12169, 2023): rails as separate networks, cross-rail traffic through "
                 "the node's NVLink")


def load(name):
    return json.loads((ROOT / f"{name}.json").read_text())


def write(name, doc):
    doc["name"] = name
    (ROOT / f"{name}.json").write_text(json.dumps(doc, indent=2) + "\n")


def multiplane(base_name, name, gpu_words, extra_sources):
    base = load(base_name)
    write(name, {
        "name": name,
        "description": (
            f"{gpu_words} cluster on a multi-plane rail-optimized NDR InfiniBand fabric that grows to 524,288 GPUs: "
            f"{base_name} nodes (see that file) with 8x 400 Gb/s ConnectX-7 NICs, NIC k on rail k. Each rail is its "
            "own fabric plane of 64-port QM9700 switches (multi-plane fat tree): a plane's leaf takes rail k of 32 "
            "nodes (one SuperPOD scalable unit, SU), and --gpus/--nodes picks the fewest tiers that connect them: "
            "leaf + spine up to 64 SUs (2,048 nodes, 16,384 GPUs), leaf + spine (aggregation) + core above, up to "
            "65,536 nodes per plane; every tier non-blocking. Planes are disjoint: traffic between GPUs of different "
            "rails on different nodes crosses the node's PCIe/CPU path to the destination rail's NIC (NCCL would use "
            "PXN over NVLink; collectives and pipeline sends here stay on their rail). The planes are alike, so the "
            "cluster is rail-symmetric and flow fidelity simulates TP rank 0's rail for every rail."),
        "sources": base["sources"] + [SRC_SUPERPOD, SRC_SUPERPOD_B200, SRC_MPFT, SRC_RAIL_ONLY] + extra_sources,
        "nodes": 128,
        "node": base["node"],
        "fabric": {"kind": "rail_optimized", "radix": 64, "max_tiers": 3, "planes": "per_rail", "link_kind": "ib",
                   "nic_speed_Gbps": 400, "link_latency_us": 0.15},
    })


def b200():
    h100 = load("dgx-h100-8")
    node = json.loads(json.dumps(h100["node"]))
    node["gpu"] = {"model": "B200 180GB", "memory_GiB": 180, "hbm_bandwidth_GBps": 8000, "sm_count": 148,
                   "peak_dense_TFLOPS": {"fp8": 4500, "bf16": 2250, "fp16": 2250, "tf32": 1100, "fp32": 75}}
    for link in node["links"]:
        if link["kind"] == "nvlink":
            link.update({"count": 18, "per_link_GBps": 50.0})
    write("dgx-b200-ndr", {
        "name": "dgx-b200-ndr",
        "description": (
            "DGX B200 cluster on a rail-optimized NDR InfiniBand fabric: 8x B200 per node on fifth-generation "
            "NVLink/NVSwitch (18 links x 50 GB/s per direction = 900 GB/s each way, 1.8 TB/s bidirectional per GPU; "
            "the NVSwitch chips modelled as one vertex), PCIe Gen5 switches and 8x ConnectX-7 400 Gb/s compute NICs "
            "laid out as in dgx-h100-8 (NIC k beside GPU k, rail k). Fabric: 64-port QM9700, 32 nodes per leaf "
            "(one SU), leaf + spine up to 64 leaves per rail, a core tier above (max_tiers 3), as the DGX SuperPOD "
            "B200 reference's component table. Default 128 nodes (4 SUs, 1,024 GPUs). GPU memory: 180 GB "
            "(1,440 GB per system); no nvidia-smi reading was available."),
        "sources": [
            "NVIDIA DGX B200 datasheet (8x B200, 1,440 GB HBM3e total, 64 TB/s HBM bandwidth, 72 PFLOPS FP8 training "
            "with sparsity = 4.5 PFLOPS dense FP8 per GPU, 2 NVSwitch chips, 14.4 TB/s aggregate NVLink, "
            "8x single-port ConnectX-7 VPI 400 Gb/s compute + 2x BlueField-3)",
            "NVIDIA Blackwell architecture technical brief (B200: fifth-generation NVLink 1.8 TB/s per GPU, "
            "18 links; dense BF16 2.25 PFLOPS, TF32 1.1 PFLOPS)",
            "PCI Express Base Specification 5.0 (x16 at 32 GT/s: 63.0 GB/s per direction)",
            SRC_SUPERPOD_B200, SRC_QM9700],
        "nodes": 128,
        "node": node,
        "fabric": {"kind": "rail_optimized", "radix": 64, "max_tiers": 3, "link_kind": "ib", "nic_speed_Gbps": 400,
                   "link_latency_us": 0.15},
    })


def gb200_nvl72():
    gpus, cpus = 72, 36
    node = {
        "gpu": {"model": "B200 (GB200 NVL72) 186GB", "memory_GiB": 186, "hbm_bandwidth_GBps": 8000, "sm_count": 148,
                "peak_dense_TFLOPS": {"fp8": 5000, "bf16": 2500, "fp16": 2500, "tf32": 1250, "fp32": 80}},
        "gpus": gpus, "nvswitches": 1, "pcie_switches": 0, "cpus": cpus, "nics": gpus,
        "links": [
            {"a": "gpu*", "b": "nvswitch0", "kind": "nvlink", "count": 18, "per_link_GBps": 50.0, "latency_us": 0.15},
            {"a": "gpu*", "b": [f"cpu{g // 2}" for g in range(gpus)], "kind": "nvlink", "bandwidth_GBps": 450.0,
             "latency_us": 0.3},
            {"a": "nic*", "b": [f"cpu{g // 2}" for g in range(gpus)], "kind": "pcie", "bandwidth_GBps": 63.0,
             "latency_us": 0.2},
        ],
    }
    write("gb200-nvl72", {
        "name": "gb200-nvl72",
        "description": (
            "GB200 NVL72 racks: one 'node' is a rack of 18 compute trays (2 GB200 superchips each: 2 Grace CPUs, "
            "4 B200) whose 72 GPUs form one NVLink domain through 9 NVLink switch trays (modelled as one nvswitch "
            "vertex: each GPU's 18 NVLink5 links at 50 GB/s per direction are striped over the switch chips, "
            "1.8 TB/s bidirectional per GPU, 130 TB/s per rack). Each GPU reaches its Grace CPU by NVLink-C2C "
            "(450 GB/s per direction per GPU, kept off GPU-to-GPU routes by its latency) and one ConnectX-7 400 Gb/s "
            "NIC hangs off the Grace's PCIe Gen5 (4 per tray). Tensor/expert parallel groups up to 72 GPUs stay "
            "inside the NVLink domain (collectives use its rings/trees), pipeline and data parallel traffic between "
            "racks uses the scale-out fabric: a 3-tier non-blocking fat tree of 64-port NDR switches in NIC order "
            "(not rail-aligned: one rack's 72 NICs fill 2.25 leaves). Default 8 racks (one SU, 576 GPUs)."),
        "sources": [
            "NVIDIA GB200 NVL72 datasheet / product page (72 Blackwell GPUs, 36 Grace CPUs, 18 compute trays, 9 "
            "NVLink switch trays, NVLink 1.8 TB/s per GPU, 130 TB/s per rack, up to 13.4-13.8 TB HBM3e; FP8 "
            "720 PFLOPS with sparsity per rack = 5 PFLOPS dense per GPU)",
            "NVIDIA DGX SuperPOD Reference Architecture with DGX GB200 (docs.nvidia.com/dgx-superpod): SUs of 8 "
            "GB200 NVL72 racks (576 GPUs), NDR 400 Gb/s InfiniBand compute fabric, scales beyond 128 racks (9,216 GPUs)",
            "NVIDIA Grace Hopper / Grace Blackwell NVLink-C2C: 900 GB/s bidirectional CPU-GPU",
            "PCI Express Base Specification 5.0 (x16: 63.0 GB/s per direction)", SRC_QM9700],
        "nodes": 8,
        "node": node,
        "fabric": {"kind": "fat_tree", "tiers": 3, "radix": 64, "link_kind": "ib", "nic_speed_Gbps": 400,
                   "link_latency_us": 0.15},
    })


def spectrum_x(name, oversub):
    base = load("hgx-h200-8")
    ratio = "non-blocking" if oversub == 1 else f"{oversub}:1 oversubscribed at the leaf"
    write(name, {
        "name": name,
        "description": (
            f"HGX H200 cluster on a Spectrum-X-like RoCE ethernet fabric, {ratio}: hgx-h200-8 nodes with 8x 400 GbE "
            "SuperNICs (BlueField-3 class, NIC k on rail k) into SN5600-class switches (51.2 Tb/s: 128 ports of "
            "400 GbE), rail-optimized leaves of 64 nodes at 1:1, leaf + spine and a super-spine tier above when "
            "needed (max_tiers 3; the tier count follows --gpus). Spectrum-X's adaptive routing is not modelled: "
            "flows keep their ECMP paths, as plain RoCE does. Default 256 nodes (2,048 GPUs)."),
        "sources": base["sources"][:5] + [
            "NVIDIA Spectrum-X / Spectrum-4 SN5600 switch datasheet (51.2 Tb/s; 64 ports of 800 GbE or 128 of 400 GbE)",
            "NVIDIA BlueField-3 SuperNIC product brief (400 Gb/s RoCE per GPU in Spectrum-X reference designs)",
            "NVIDIA Spectrum-X reference architecture overview (rail-optimized two- and three-tier RoCE fabrics "
            "for H100/H200 clusters)"],
        "nodes": 256,
        "node": base["node"],
        "fabric": {"kind": "rail_optimized", "radix": 128, "max_tiers": 3, "link_kind": "roce",
                   "nic_speed_Gbps": 400, "link_latency_us": 0.3,
                   "oversubscription": [oversub, 1]},
    })


def oversubscribed_ndr():
    base = load("h100-ndr-multiplane")
    base["description"] = base["description"].replace(
        "every tier non-blocking", "leaves 2:1 oversubscribed (42 ports down to NICs, 21 up), the "
        "tiers above non-blocking").replace("leaf takes rail k of 32 nodes (one SuperPOD scalable unit, SU)",
                                            "leaf takes rail k of 42 nodes")
    base["fabric"]["oversubscription"] = [2, 1]
    write("h100-ndr-multiplane-2to1", base)


if __name__ == "__main__":
    multiplane("dgx-h100-8", "h100-ndr-multiplane", "H100", [])
    multiplane("hgx-h200-8", "h200-ndr-multiplane", "H200", [])
    b200()
    gb200_nvl72()
    spectrum_x("h200-spectrum-x", 1)
    spectrum_x("h200-spectrum-x-2to1", 2)
    oversubscribed_ndr()
