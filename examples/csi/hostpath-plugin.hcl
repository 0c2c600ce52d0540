# The hostpath CSI plugin (cmd/troupe-csi-hostpath) on every client, as one
# monolith instance per node: controller and node services in one process.
# The client gives the task a directory at mount_dir, finds csi.sock there,
# fingerprints the plugin and keeps probing it.
#   go build -o /usr/local/bin/ ./cmd/troupe-csi-hostpath   # tasks get PATH=/usr/local/bin:/usr/bin:/bin
#   bin/troupe job run examples/csi/hostpath-plugin.hcl
#   bin/troupe plugin status hostpath
job "csi-hostpath" {
  datacenters = ["dc1"]
  type        = "system"

  group "plugin" {
    task "plugin" {
      driver = "exec"

      config {
        # exec tasks are not chrooted: the client names the socket it
        # probes in CSI_ENDPOINT (under the task's mount_dir).
        command = "/bin/sh"
        args = ["-c", "exec troupe-csi-hostpath -endpoint \"$CSI_ENDPOINT\" -root /var/lib/troupe-hostpath -node-id \"$NOMAD_ALLOC_NODE_ID\" -mode monolith"]
      }

      csi_plugin {
        id        = "hostpath"
        type      = "monolith"
        mount_dir = "/csi"
      }

      resources {
        cpu    = 100
        memory = 64
      }
    }
  }
}
