# What `cmake --install` puts where, and the Debian package CPack builds from it
# (scripts/package.sh: cpack, then lintian with --lintian). Installed binaries find
# their engine profiles at <prefix>/share/blkbench/profiles (engine/sim/machine_profile.h).
include(GNUInstallDirs)
set(BLKBENCH_SHARE ${CMAKE_INSTALL_DATADIR}/blkbench)

install(TARGETS blkbench blkbench-controller blkbench-agent blkbench-vm-guest blkbench-vm-cell
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY engine/profiles/ DESTINATION ${BLKBENCH_SHARE}/profiles
        FILES_MATCHING PATTERN "*.yaml" PATTERN "*.md")
install(DIRECTORY dashboards/ DESTINATION ${BLKBENCH_SHARE}/dashboards)
install(DIRECTORY examples/ DESTINATION ${BLKBENCH_SHARE}/examples USE_SOURCE_PERMISSIONS)
install(FILES deploy/config/agent.example.yaml deploy/prometheus/prometheus.yml
        DESTINATION ${BLKBENCH_SHARE}/config)

# The systemd units name the binaries by absolute path: point them at the prefix used at
# install time (cpack installs with /usr, `cmake --install --prefix P` with P).
foreach(unit blkbench-controller.service blkbench-agent.service)
  install(CODE "
    file(READ \"${PROJECT_SOURCE_DIR}/deploy/systemd/${unit}\" text)
    string(REPLACE \"/usr/local/bin/\" \"\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_BINDIR}/\"
           text \"\${text}\")
    set(dest \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/lib/systemd/system\")
    message(STATUS \"Installing: \${dest}/${unit}\")
    file(MAKE_DIRECTORY \"\${dest}\")
    file(WRITE \"\${dest}/${unit}\" \"\${text}\")")
endforeach()

# Completion and the man pages: blkbench(1) generated from the CLI's command table by the
# CLI itself, the daemons' (8) from their own flags (`--man`), the VM helpers' written by
# hand; compressed as Debian wants them (gzip -9n: no name or time stamp inside).
set(gen ${PROJECT_BINARY_DIR}/generated)
set(pkg ${PROJECT_SOURCE_DIR}/deploy/debian)
add_custom_command(
  OUTPUT ${gen}/blkbench.bash ${gen}/_blkbench ${gen}/blkbench.1.gz
  COMMAND ${CMAKE_COMMAND} -E make_directory ${gen}
  COMMAND sh -c "$<TARGET_FILE:blkbench> completion bash > ${gen}/blkbench.bash"
  COMMAND sh -c "$<TARGET_FILE:blkbench> completion zsh > ${gen}/_blkbench"
  COMMAND sh -c "$<TARGET_FILE:blkbench> man | gzip -9n > ${gen}/blkbench.1.gz"
  DEPENDS blkbench VERBATIM)
set(man_pages ${gen}/blkbench.1.gz)
foreach(daemon blkbench-controller blkbench-agent)
  add_custom_command(
    OUTPUT ${gen}/${daemon}.8.gz
    COMMAND sh -c "$<TARGET_FILE:${daemon}> --man | gzip -9n > ${gen}/${daemon}.8.gz"
    DEPENDS ${daemon} VERBATIM)
  list(APPEND man_pages ${gen}/${daemon}.8.gz)
endforeach()
foreach(helper blkbench-vm-guest blkbench-vm-cell)
  add_custom_command(
    OUTPUT ${gen}/${helper}.8.gz
    COMMAND sh -c "gzip -9n < ${pkg}/${helper}.8 > ${gen}/${helper}.8.gz"
    DEPENDS ${pkg}/${helper}.8 VERBATIM)
  list(APPEND man_pages ${gen}/${helper}.8.gz)
endforeach()
# The Debian changelog (the package is native: changelog.gz, not changelog.Debian.gz) and
# /etc/blkbench/agent.yaml: agent.example.yaml with every setting commented out.
add_custom_command(
  OUTPUT ${gen}/changelog.gz ${gen}/agent.yaml
  COMMAND sh -c "gzip -9n < ${pkg}/changelog > ${gen}/changelog.gz"
  COMMAND sh -c "{ cat ${pkg}/agent.yaml.head; sed -E 's/^([^#])/# \\1/' ${PROJECT_SOURCE_DIR}/deploy/config/agent.example.yaml; } > ${gen}/agent.yaml"
  DEPENDS ${pkg}/changelog ${pkg}/agent.yaml.head ${PROJECT_SOURCE_DIR}/deploy/config/agent.example.yaml
  VERBATIM)
add_custom_target(blkbench_shell_files ALL
  DEPENDS ${gen}/blkbench.bash ${gen}/_blkbench ${man_pages} ${gen}/changelog.gz ${gen}/agent.yaml)
install(FILES ${gen}/blkbench.bash DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions
        RENAME blkbench)
install(FILES ${gen}/_blkbench DESTINATION ${CMAKE_INSTALL_DATADIR}/zsh/vendor-completions)
install(FILES ${gen}/blkbench.1.gz DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
list(REMOVE_ITEM man_pages ${gen}/blkbench.1.gz)
install(FILES ${man_pages} DESTINATION ${CMAKE_INSTALL_MANDIR}/man8)
install(FILES README.md ${pkg}/copyright ${gen}/changelog.gz DESTINATION ${CMAKE_INSTALL_DOCDIR})
# /etc/blkbench/agent.yaml (a conffile of the .deb): /etc for the prefix /usr, as
# GNUInstallDirs has it, else <prefix>/etc, so `cmake --install --prefix P` stays inside P.
# Decided at install time, when cpack's /usr is known (file(INSTALL) adds DESTDIR itself).
install(CODE "
  if(CMAKE_INSTALL_PREFIX STREQUAL \"/usr\")
    set(etc /etc/blkbench)
  else()
    set(etc \"\${CMAKE_INSTALL_PREFIX}/etc/blkbench\")
  endif()
  file(INSTALL \"${gen}/agent.yaml\" DESTINATION \"\${etc}\")")

# The .deb: runtime dependencies only, computed by dpkg-shlibdeps from the binaries' own
# shared libraries (libgrpc++, libprotobuf, libsqlite3, liburing, ...), never -dev
# packages or the toolchain. tests/deb_lintian_test.sh holds it to lintian: no error or
# warning.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME blkbench)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
# Must name a real host (lintian: bogus-mail-host); deploy/debian/changelog signs with it.
set(CPACK_PACKAGE_CONTACT "blkbench maintainers <blkbench@example.org>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "block-layer benchmark matrices: controller, agent, CLI and a blk-mq model")
# Lines of at most 72 columns (lintian allows 80 with the indent CPack adds).
set(CPACK_PACKAGE_DESCRIPTION "\
blkbench answers one question for Linux block-layer developers: does
this kernel change make I/O faster or slower, where, and by how much?
A matrix of fio-style jobs is expanded into runs, placed on agents with
real, simulated or VM-hosted devices, and its results are stored,
exported to Prometheus and gated.
.
This package holds the controller and agent daemons (systemd units,
neither enabled nor started), the blkbench command line, the engine's
machine profiles, Grafana dashboards and example matrices.")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION admin)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_STRIP_FILES ON)  # debug info stays in the build tree
# util-linux is essential: named only for the version the agent was tested with (wipefs's
# and libblkid's view of signatures).
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "util-linux (>= 2.38)")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "prometheus, fio, postgresql")
# Maintainer scripts (systemctl daemon-reload when systemd runs; nothing enabled or
# started) and the conffile list, installed with dpkg's modes (0755 scripts, 0644 lists).
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA ${pkg}/postinst ${pkg}/prerm ${pkg}/postrm ${pkg}/conffiles)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_PACKAGE_DIRECTORY ${PROJECT_BINARY_DIR}/package)
include(CPack)
