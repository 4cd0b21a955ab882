#!/usr/bin/env python3
"""Writes the what-if variants of built-in clusters used in validation/health/README.md into
validation/health/clusters/ (the same edit the GUI's what-if switches and sim/cluster_variant.hpp make):

  h100-rail-ndr-nogdr.json   h100-rail-ndr (128 x DGX H100, rail-optimized NDR) with gpudirect_rdma false
  dgx-h100-8-nogdr.json      dgx-h100-8 with gpudirect_rdma false (for 2-node comparisons)
  dgx-h100-8-pcie-only.json  dgx-h100-8 without NVLink (GPUs over PCIe switch, root complex, UPI)
  pcie-gen5-8-pxb.json       pcie-gen5-8 with p2p_level PXB (NCCL's default on Intel CPUs)

    python3 validation/health/make_variants.py
"""
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def load(name):
    with open(os.path.join(ROOT, "topologies", name + ".json")) as f:
        return json.load(f)


def write(doc, name, what):
    doc["name"] = name
    doc["description"] = what + " " + doc["description"]
    with open(os.path.join(HERE, "clusters", name + ".json"), "w") as f:
        json.dump(doc, f, indent=2)
        f.write("\n")


def main():
    os.makedirs(os.path.join(HERE, "clusters"), exist_ok=True)
    d = load("h100-rail-ndr")
    d["node"]["gpudirect_rdma"] = False
    write(d, "h100-rail-ndr-nogdr", "WHAT-IF: GPUDirect RDMA off (traffic between nodes staged through host memory).")
    d = load("dgx-h100-8")
    d["node"]["gpudirect_rdma"] = False
    write(d, "dgx-h100-8-nogdr", "WHAT-IF: GPUDirect RDMA off (traffic between nodes staged through host memory).")
    d = load("dgx-h100-8")
    d["node"]["links"] = [l for l in d["node"]["links"] if l["kind"] != "nvlink"]
    del d["node"]["nvswitches"]
    write(d, "dgx-h100-8-pcie-only", "WHAT-IF: no NVLink (GPUs talk over PCIe switches, root complex and UPI).")
    d = load("pcie-gen5-8")
    d["node"]["p2p_level"] = "PXB"
    write(d, "pcie-gen5-8-pxb", "WHAT-IF: NCCL_P2P_LEVEL=PXB (NCCL's default on Intel CPUs: pairs through the root "
          "complex or UPI copy through host memory).")


if __name__ == "__main__":
    main()
