# Every field of a volume specification.
id          = "db1"
name        = "database"
type        = "csi"
namespace   = "prod"
external_id = "vol-0abc"
plugin_id   = "ebs"
snapshot_id = "snap-1"

capacity_min = "10GiB"
capacity_max = "20G"

capability {
  access_mode     = "single-node-writer"
  attachment_mode = "file-system"
}

capability {
  access_mode     = "single-node-reader-only"
  attachment_mode = "block-device"
}

mount_options {
  fs_type     = "ext4"
  mount_flags = ["noatime", "nodev"]
}

secrets {
  token = "xyzzy"
}

parameters {
  skuname = "Premium_LRS"
  iops    = 3000
}

context {
  server = "10.0.0.1"
}

topology_request {
  required {
    topology {
      segments {
        rack = "R1"
        zone = "a"
      }
    }
    topology {
      segments {
        rack = "R2"
      }
    }
  }
  preferred {
    topology {
      segments {
        rack = "R1"
      }
    }
  }
}
