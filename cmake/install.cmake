# What `cmake --install` puts where, and the Debian package CPack builds from it
# (`cpack --config build/CPackConfig.cmake`, or scripts/package.sh). Installed binaries find
# their engine profiles at <prefix>/share/blkbench/profiles (engine/sim/machine_profile.h).
include(GNUInstallDirs)
set(BLKBENCH_SHARE ${CMAKE_INSTALL_DATADIR}/blkbench)

install(TARGETS blkbench blkbench-controller blkbench-agent blkbench-vm-guest blkbench-vm-cell
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY engine/profiles/ DESTINATION ${BLKBENCH_SHARE}/profiles
        FILES_MATCHING PATTERN "*.yaml" PATTERN "*.md")
install(DIRECTORY dashboards/ DESTINATION ${BLKBENCH_SHARE}/dashboards)
install(DIRECTORY examples/ DESTINATION ${BLKBENCH_SHARE}/examples)
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

# Completion and the man page, generated from the CLI's command table by the CLI itself.
set(gen ${PROJECT_BINARY_DIR}/generated)
add_custom_command(
  OUTPUT ${gen}/blkbench.bash ${gen}/_blkbench ${gen}/blkbench.1
  COMMAND ${CMAKE_COMMAND} -E make_directory ${gen}
  COMMAND sh -c "$<TARGET_FILE:blkbench> completion bash > ${gen}/blkbench.bash"
  COMMAND sh -c "$<TARGET_FILE:blkbench> completion zsh > ${gen}/_blkbench"
  COMMAND sh -c "$<TARGET_FILE:blkbench> man > ${gen}/blkbench.1"
  DEPENDS blkbench VERBATIM)
add_custom_target(blkbench_shell_files ALL
  DEPENDS ${gen}/blkbench.bash ${gen}/_blkbench ${gen}/blkbench.1)
install(FILES ${gen}/blkbench.bash DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions
        RENAME blkbench)
install(FILES ${gen}/_blkbench DESTINATION ${CMAKE_INSTALL_DATADIR}/zsh/vendor-completions)
install(FILES ${gen}/blkbench.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
install(FILES README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})

# The .deb: runtime dependencies only, computed by dpkg-shlibdeps from the binaries' own
# shared libraries (libgrpc++, libprotobuf, libsqlite3, liburing, ...), never -dev
# packages or the toolchain.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME blkbench)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "blkbench maintainers <blkbench@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "block-layer benchmark matrices: controller, agent, CLI and a blk-mq model")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION admin)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_STRIP_FILES ON)  # debug info stays in the build tree
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "util-linux")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "prometheus, fio, postgresql")
set(CPACK_PACKAGE_DIRECTORY ${PROJECT_BINARY_DIR}/package)
include(CPack)
