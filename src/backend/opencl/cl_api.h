/* The OpenCL 1.2 host API, loaded with dlopen at first use: the library links no OpenCL library,
 * so it runs (and says why the device is missing) on machines without one. The calls that can fail
 * at run time go through wrappers that a test can make fail (lc_cl_inject_fault). */
#ifndef LC_CL_API_H
#define LC_CL_API_H

#define CL_TARGET_OPENCL_VERSION 120
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl.h>
#ifndef CL_PLATFORM_NOT_FOUND_KHR
#define CL_PLATFORM_NOT_FOUND_KHR -1001 /* cl_khr_icd: the loader found no vendor */
#endif

#include "lowconv.h"

typedef struct lc_cl_api {
  cl_int (*GetPlatformIDs)(cl_uint, cl_platform_id *, cl_uint *);
  cl_int (*GetPlatformInfo)(cl_platform_id, cl_platform_info, size_t, void *, size_t *);
  cl_int (*GetDeviceIDs)(cl_platform_id, cl_device_type, cl_uint, cl_device_id *, cl_uint *);
  cl_int (*GetDeviceInfo)(cl_device_id, cl_device_info, size_t, void *, size_t *);
  cl_context (*CreateContext)(const cl_context_properties *, cl_uint, const cl_device_id *,
                              void(CL_CALLBACK *)(const char *, const void *, size_t, void *), void *, cl_int *);
  cl_int (*ReleaseContext)(cl_context);
  cl_command_queue (*CreateCommandQueue)(cl_context, cl_device_id, cl_command_queue_properties, cl_int *);
  cl_int (*ReleaseCommandQueue)(cl_command_queue);
  cl_mem (*CreateBuffer)(cl_context, cl_mem_flags, size_t, void *, cl_int *);
  cl_int (*ReleaseMemObject)(cl_mem);
  cl_program (*CreateProgramWithSource)(cl_context, cl_uint, const char **, const size_t *, cl_int *);
  cl_program (*CreateProgramWithBinary)(cl_context, cl_uint, const cl_device_id *, const size_t *,
                                        const unsigned char **, cl_int *, cl_int *);
  cl_int (*BuildProgram)(cl_program, cl_uint, const cl_device_id *, const char *,
                         void(CL_CALLBACK *)(cl_program, void *), void *);
  cl_int (*GetProgramBuildInfo)(cl_program, cl_device_id, cl_program_build_info, size_t, void *, size_t *);
  cl_int (*GetProgramInfo)(cl_program, cl_program_info, size_t, void *, size_t *);
  cl_int (*ReleaseProgram)(cl_program);
  cl_kernel (*CreateKernel)(cl_program, const char *, cl_int *);
  cl_int (*ReleaseKernel)(cl_kernel);
  cl_int (*SetKernelArg)(cl_kernel, cl_uint, size_t, const void *);
  cl_int (*GetKernelWorkGroupInfo)(cl_kernel, cl_device_id, cl_kernel_work_group_info, size_t, void *, size_t *);
  cl_int (*EnqueueNDRangeKernel)(cl_command_queue, cl_kernel, cl_uint, const size_t *, const size_t *,
                                 const size_t *, cl_uint, const cl_event *, cl_event *);
  cl_int (*EnqueueReadBuffer)(cl_command_queue, cl_mem, cl_bool, size_t, size_t, void *, cl_uint,
                              const cl_event *, cl_event *);
  cl_int (*EnqueueWriteBuffer)(cl_command_queue, cl_mem, cl_bool, size_t, size_t, const void *, cl_uint,
                               const cl_event *, cl_event *);
  cl_int (*EnqueueCopyBuffer)(cl_command_queue, cl_mem, cl_mem, size_t, size_t, size_t, cl_uint,
                              const cl_event *, cl_event *);
  cl_int (*Finish)(cl_command_queue);
  cl_int (*Flush)(cl_command_queue);
  cl_int (*WaitForEvents)(cl_uint, const cl_event *);
  cl_int (*GetEventProfilingInfo)(cl_event, cl_profiling_info, size_t, void *, size_t *);
  cl_int (*RetainEvent)(cl_event);
  cl_int (*ReleaseEvent)(cl_event);
  cl_mem (*CreateSubBuffer)(cl_mem, cl_mem_flags, cl_buffer_create_type, const void *, cl_int *);
  void *(*EnqueueMapBuffer)(cl_command_queue, cl_mem, cl_bool, cl_map_flags, size_t, size_t, cl_uint,
                            const cl_event *, cl_event *, cl_int *);
  cl_int (*EnqueueUnmapMemObject)(cl_command_queue, cl_mem, void *, cl_uint, const cl_event *, cl_event *);
} lc_cl_api;

/* The API, loaded once (LOWCONV_OPENCL_LIBRARY overrides the library name); NULL with an lc_error
 * naming the library tried when it can't be loaded. */
const lc_cl_api *lc_cl_api_get(void);

/* Tests: make the n-th fallible OpenCL call from now fail (1 = next) with CL_OUT_OF_RESOURCES,
 * 0 = off. Fallible calls: create context/queue/buffer/program/kernel, build, set arg, enqueue,
 * finish, wait, profiling info, map. */
void lc_cl_inject_fault(long n);
long lc_cl_fault_left(void); /* the countdown's value: calls counted from a large n */

#endif
