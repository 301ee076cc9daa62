# The device code under kernels/ is compiled at run time, so the library carries its text: every header
# becomes a string in a generated source file, rebuilt whenever a header changes.
set(FGEMM_EMBED_SCRIPT ${CMAKE_CURRENT_LIST_DIR}/embed_kernels_script.cmake)

function(fgemm_embed_kernels target kernel_dir)
  file(GLOB_RECURSE headers CONFIGURE_DEPENDS ${kernel_dir}/*.cuh)
  set(output ${CMAKE_CURRENT_BINARY_DIR}/generated/embedded_kernels.cpp)
  add_custom_command(
    OUTPUT ${output}
    COMMAND ${CMAKE_COMMAND} -DKERNEL_DIR=${kernel_dir} -DOUTPUT=${output} -P ${FGEMM_EMBED_SCRIPT}
    DEPENDS ${headers} ${FGEMM_EMBED_SCRIPT}
    COMMENT "Embedding the kernel headers")
  target_sources(${target} PRIVATE ${output})
endfunction()
