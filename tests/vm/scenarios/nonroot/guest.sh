# numastor run as an unprivileged user (uid 1000); ground truth is still read as root.
vm_load_storage
vm_wait_disks 60
# shellcheck disable=SC2034 # read by vm_numastor
VM_AS_USER=1
vm_check_round
