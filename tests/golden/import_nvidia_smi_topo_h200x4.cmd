import
nvidia-smi-topo
validation/h200x4/logs/nvidia-smi.txt
--gpu-from
hgx-h200-4
--name
h200x4-imported
